//===- TileOps.td - Operations of the tile dialect ---------*- tablegen -*-===//
#ifndef SPARSE_MLA_TILE_OPS
#define SPARSE_MLA_TILE_OPS

include "sparse-mla/Dialect/Tile/IR/TileTypes.td"
include "sparse-mla/Dialect/Tile/IR/TileInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

def Tile_RegTile : Type<CPred<"::llvm::isa<::sparse_mla::tile::RegTileType>($_self)">,
    "register tile", "::sparse_mla::tile::RegTileType">;
def Tile_SmemTile : Type<CPred<"::llvm::isa<::sparse_mla::tile::SmemTileType>($_self)">,
    "shared-memory tile", "::sparse_mla::tile::SmemTileType">;
def Tile_Token : Type<CPred<"::llvm::isa<::sparse_mla::tile::TokenType>($_self)">,
    "async copy token", "::sparse_mla::tile::TokenType"> {
  let builderCall = "::sparse_mla::tile::TokenType::get($_builder.getContext())";
}
def Tile_RegOrSmemTile : AnyTypeOf<[Tile_RegTile, Tile_SmemTile]>;
def Tile_MemRefOrSmemTile : AnyTypeOf<[AnyMemRef, Tile_SmemTile]>;

//===----------------------------------------------------------------------===//
// Kernels and launch geometry
//===----------------------------------------------------------------------===//

def Tile_KernelOp : Tile_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove, Symbol,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>,
    SingleBlockImplicitTerminator<"ReturnOp">]> {
  let summary = "A GPU kernel written with warpgroup tiles";
  let description = [{
    A kernel launched on a grid of CTAs of `warpgroups` x 128 threads. Its
    arguments are global tensors and scalars. A tensor is a memref with the
    identity layout, or a 2-D matrix whose rows are apart by a stride of
    its descriptor (`memref<?x?xbf16, strided<[?, 1]>>`: a view of some
    columns of a wider matrix, as q sliced from a fused projection); only
    the aligned pointer, sizes and strides of the descriptor are read. Every warpgroup runs the body; shared tiles
    are common to the CTA. The arguments' names as written (`arg_names`,
    kept by the parser and used by the printer) are part of the ABI: the
    manifest records them and the runtime passes arguments by name.

    ```mlir
    tile.kernel @postprocess(%ws: memref<?x?xf32>, %out: memref<?x?xbf16>)
        warpgroups(1) { ... }
    ```

    A kernel generic over shape parameters (`{name}` dimensions of its
    tiles, `tile.param` values) lists the `variants` it is compiled for,
    each binding every parameter to a positive integer; `tile-specialize`
    turns it into one kernel per variant.

    ```mlir
    tile.kernel @k(...) warpgroups(1) variants([{n = 64}, {n = 128} ]) {
      %t = tile.alloc : !tile.smem<64x{n}xbf16>
      ...
    ```

    Parameters that are the same in every variant, the build's constants,
    are stated once: `constants({bits = 40})` binds them in each variant
    (they do not name it).

    Parameters that follow from others are derived, not listed:
    `derive([m, r] = affine_map<()[n] -> (n * 2, n - 16)>[n])` binds m and r
    in every variant from the listed parameters (the map's symbols, in
    order), so that no variant can state them inconsistently.

    With `cluster(n)`, n > 1, the grid's x dimension is cut into clusters of
    n consecutive CTAs that run at once and reach each other's shared memory
    (`tile.cluster_rank`, `tile.write` and `tile.mbarrier_arrive` with
    `cta`). `tile.mbarrier_init` then synchronizes the cluster, mbarrier
    waits acquire at cluster scope, and the CTAs of a cluster wait for each
    other before they exit, so none leaves while a peer may still write to
    its shared memory.

    ```mlir
    tile.kernel @pair(...) warpgroups(2) cluster(2) { ... }
    ```

    The signature declares the kernel's index space once. `grid(...)`
    lists the grid's x, y and z, each a list of named work axes with their
    extents, outermost first: CTA i of a grid dimension owns the axes'
    coordinates that delinearize i. `tile.work_id "name"` gives the CTA its
    coordinate on an axis (`tile-decode-work` writes the decode), and the
    manifest records the same extents for the runtime to size the grid. A
    dimension with `window(slot : n from f)` is a window of its work: the
    launch runs n CTAs, CTA i owning item f + i, and `slot` names i itself
    (a call may cover its work in several launches, each with buffers for
    its own items); the runtime checks that the window lies in the work.

    Extents are size expressions: integers, integer scalar arguments
    (`%n`), sizes of tensor arguments (`%o[0]`) and shape parameters
    (`{hp}`, bound by tile-specialize), with `+`, `-`, `*`, `floordiv`,
    `ceildiv` and `mod`. A tensor argument may state its own extents the
    same way (`?`: any), after its type, and `optional` where the caller
    may leave it out (a null descriptor with no elements); the runtime
    checks every stated extent before a launch and refuses a missing
    tensor that is not optional.

    ```mlir
    tile.kernel @rows(%o: memref<?x?xbf16> [?, 64], %d: memref<?xf32> [%o[0]])
        warpgroups(1) grid([block : %o[0] ceildiv 64]) {
      %block = tile.work_id "block"
      ...
    tile.kernel @tiles(%keys: memref<?x?xi32> [%tiles * %groups, ?], %batch: index,
                       %seq: index, %t: index, %first: index, %tiles: index,
                       %groups: index) warpgroups(1)
        grid([b : %batch, tile : %seq ceildiv %t] window(slot : %tiles from %first),
             [g : %groups]) { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       ConfinedAttr<I32Attr, [IntMinValue<1>, IntMaxValue<4>]>:$warpgroups,
                       OptionalAttr<DictArrayAttr>:$variants,
                       OptionalAttr<ConfinedAttr<I32Attr, [IntMinValue<1>, IntMaxValue<8>]>>:$cluster,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       StrArrayAttr:$arg_names,
                       OptionalAttr<AffineMapAttr>:$sizes,
                       OptionalAttr<DictArrayAttr>:$size_symbols,
                       OptionalAttr<DictArrayAttr>:$grid,
                       OptionalAttr<AffineMapAttr>:$derive,
                       OptionalAttr<StrArrayAttr>:$derive_names,
                       OptionalAttr<StrArrayAttr>:$derive_symbols,
                       OptionalAttr<DictionaryAttr>:$constants);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    /// Threads of one CTA.
    int64_t getNumThreads() { return ::sparse_mla::hopper::kWarpgroupThreads * getWarpgroups(); }
    /// CTAs of a cluster (1: the kernel runs without clusters).
    int64_t getClusterSize() { return getCluster().value_or(1); }
    /// The names of the shape parameters used in the body, in order of use.
    ::llvm::SetVector<::mlir::StringAttr> getShapeParameters();
    ::mlir::LogicalResult verifySizes();
    ::mlir::LogicalResult verifyGrid();
    ::mlir::LogicalResult verifyExtents();
    /// Size expression `i` of the signature (a result of `sizes`).
    ::mlir::AffineExpr getSize(int64_t i) { return getSizes()->getResult(i); }
    /// The CTAs of each grid dimension: its window's count, or the product
    /// of its axes' extents.
    ::llvm::SmallVector<::mlir::AffineExpr> getGridCounts();
    /// The grid dimension of axis `name` and its position there, if any.
    /// (-1 for the name of its window: the launch's own position).
    std::optional<std::pair<unsigned, int>> findWorkAxis(::llvm::StringRef name);
    /// Argument `i`'s stated extents (indices into `sizes`, -1: any), or
    /// none.
    ::mlir::DenseI64ArrayAttr getArgExtents(unsigned i);
    bool isArgOptional(unsigned i);
    ::mlir::LogicalResult verifyDerive();
    ::mlir::LogicalResult verifyConstants();
    /// Variant `i`'s binding of every shape parameter: its own, the
    /// derived ones and the constants.
    ::mlir::DictionaryAttr getBinding(unsigned i);
  }];
}

def Tile_ReturnOp : Tile_Op<"return", [Pure, Terminator, HasParent<"KernelOp">]> {
  let summary = "Ends a tile kernel";
  let assemblyFormat = "attr-dict";
}

def Tile_WorkIdOp : Tile_Op<"work_id", [Pure]> {
  let summary = "The CTA's coordinate on one of the kernel's work axes";
  let description = [{
    The coordinate of the CTA on the work axis `name` that the kernel's
    `grid(...)` declares: its grid dimension's block index (plus the
    window's start) delinearized over that dimension's axes, outermost
    first. `tile-decode-work` writes it out.

    ```mlir
    %g = tile.work_id "g"
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Index:$result);
  let assemblyFormat = "$name attr-dict";
  let hasVerifier = 1;
}

def Tile_BlockIdOp : Tile_Op<"block_id", [Pure]> {
  let summary = "Index of the CTA in the grid (kernels use tile.work_id; passes use this)";
  let arguments = (ins Tile_DimAttr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tile_GridDimOp : Tile_Op<"grid_dim", [Pure]> {
  let summary = "Number of CTAs of the grid along one dimension";
  let arguments = (ins Tile_DimAttr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tile_ParamOp : Tile_Op<"param", [Pure]> {
  let summary = "The value of one of the kernel's shape parameters";
  let description = [{
    The integer that each variant of the kernel binds to `name`, the shape
    parameter written `{name}` in its tile types. `tile-specialize`
    replaces it with a constant.

    ```mlir
    %heads = tile.param "heads" : index
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnySignlessIntegerOrIndex:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Tile_ClusterRankOp : Tile_Op<"cluster_rank", [Pure]> {
  let summary = "Index of the CTA within its cluster";
  let description = [{
    In a kernel with `cluster(n)`: the CTA's rank in its cluster, in
    [0, n) (`%cluster_ctarank`); CTA x of the grid has rank x mod n.
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_WarpgroupIdOp : Tile_Op<"warpgroup_id", [Pure]> {
  let summary = "Index of the executing warpgroup within the CTA";
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Register tiles: creation and elementwise math
//===----------------------------------------------------------------------===//

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"value type is the tile element type", "result", "value",
                   "::llvm::cast<RegTileType>($_self).getElementType()">]> {
  let summary = "A register tile with every element equal to a scalar";
  let arguments = (ins AnyType:$value);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "$value attr-dict `:` qualified(type($result))";
  let extraClassDeclaration = [{
    /// Whether every element is +0.0: a GEMM from it need not read it, and
    /// GEMM chains from it may be added onto one another.
    bool isPositiveZero();
  }];
}

def Tile_MapOp : Tile_Op<"map", [Pure, Tile_SameLayoutTiles,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "Elementwise function of register tiles of one shape";
  let description = [{
    Applies the scalar body to corresponding elements of all operands. The
    body takes one scalar per operand and yields the result element; it may
    use `arith` and `math` operations and values defined above.

    ```mlir
    %p = tile.map %s, %lse : !tile.reg<64x32xf32>, !tile.reg<64x32xf32>
        -> !tile.reg<64x32xf32> {
    ^bb0(%x: f32, %l: f32):
      %e = arith.subf %x, %l : f32
      %r = math.exp2 %e : f32
      tile.yield %r : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Tile_RegTile>:$inputs);
  let results = (outs Tile_RegTile:$result);
  let regions = (region SizedRegion<1>:$body);
  // `$inputs attr-dict : types -> type $body`, hand-written: the region
  // belongs to the op state as soon as it is parsed, so a parse error in it
  // frees nothing the parser still refers to (MLIR 22's generated parser
  // does; a fuzzer find).
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator,
    ParentOneOf<["MapOp", "PipelinedForOp"]>]> {
  let summary = "Yields values from a tile region";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "($values^ `:` qualified(type($values)))? attr-dict";
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "A tile whose elements are their coordinate along one dimension";
  let description = [{
    Element `(r, c)` of a 2-D result is `c` along dimension 1 and `r` along
    dimension 0; element `i` of a 1-D result is `i`. The positions of
    gathers and scatters are computed from it.

    ```mlir
    %c = tile.iota along 1 : !tile.reg<1x1024xi32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$dim);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "`along` $dim attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>]> {
  let summary = "The same register tile in another layout";
  let description = [{
    Moves the elements of a register tile to the threads another layout
    gives them: each warpgroup writes its tile into shared scratch of its
    own (`tile-allocate-shared` places it), synchronizes, and reads it back
    in the result's layout; so every thread of the warpgroup must reach the
    op. It ties no layouts: tile-assign-layouts solves each side on its own,
    so a value used by ops that want different layouts (the rows a gather
    reads in one layout and a GEMM's epilogue in another) is computed once
    and converted. A conversion to the same layout folds away.

    ```mlir
    %c = tile.convert_layout %rows : !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.blocked<vector = 8, lanes = 8>>>
                                  -> !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>
    ```
  }];
  let arguments = (ins Tile_RegTile:$source);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "Repeats a 1-D tile along a new dimension";
  let description = [{
    `dim = 1` repeats a vector of per-row values across the columns of the
    result; `dim = 0` repeats per-column values across the rows.
  }];
  let arguments = (ins Tile_RegTile:$source, ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$dim);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "$source `along` $dim attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>]> {
  let summary = "Reduces a 2-D tile along one dimension";
  let description = [{
    `dim = 1` reduces each row (across the columns) to one value, `dim = 0`
    each column. The threads that share a row or column combine their parts
    with shuffles and, where it spans warps (the 64 rows of a `#tile.mma`
    tile), through shared scratch (`tile-allocate-shared` places it); so
    every thread of the warpgroup must reach such a reduction.

    ```mlir
    %col_max = tile.reduce max %scores along 0 : !tile.reg<64x32xf32> -> !tile.reg<32xf32>
    ```
  }];
  let arguments = (ins Tile_RegTile:$source, Tile_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$dim);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "$kind $source `along` $dim attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_ScanOp : Tile_Op<"scan", [Tile_SameLayoutTiles,
    AllTypesMatch<["source", "result"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>]> {
  let summary = "Inclusive prefix sum (or maximum) along the rows of a 2-D tile";
  let description = [{
    Element `(r, c)` of the result combines elements `(r, 0 .. c)` of the
    source. The threads of a warpgroup that share a row combine their parts
    with shuffles and, when a row spans several warps, through shared
    scratch (`tile-allocate-shared` places it); so every thread of the
    warpgroup must reach the op. Needs a `#tile.blocked` layout.

    ```mlir
    %first = tile.scan add %counts : !tile.reg<1x1024xi32>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind, Tile_RegTile:$source);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "$kind $source attr-dict `:` qualified(type($source))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Global memory <-> registers
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>]> {
  let summary = "Loads a tile from a global tensor";
  let description = [{
    Reads the window of the memref that starts at `indices`; the tile's
    dimensions cover the trailing memref dimensions. Where `bounds` are
    given (one per tile dimension, absolute indices into those memref
    dimensions), elements at or past the bound are not read and take the
    value `pad`. Bounds and bounded indices are dimension sizes and
    positions, below 2^31: the checks are 32-bit. A thread reads each run
    of its layout as one vector, so the window's rows must be aligned to it
    (a `#tile.blocked` layout of `vector = 1` reads any row).

    With `interleaved`, the source's columns are stored in the order that
    `tile.scatter_add_rows {interleaved}` writes: the tile reads them back
    in their natural order, two elements at a time. The matrix's columns and
    the window's column index must then be multiples of 16; bounds apply
    to the natural positions.
  }];
  let arguments = (ins AnyMemRef:$source, Variadic<Index>:$indices,
                       Variadic<Index>:$bounds, Optional<AnyType>:$pad,
                       UnitAttr:$interleaved);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` (`bounds` `[` $bounds^ `]`)? (`pad` $pad^)?
    attr-dict `:` qualified(type($source)) (`,` qualified(type($pad))^)? `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [AttrSizedOperandSegments,
    MemoryEffects<[MemWrite]>]> {
  let summary = "Stores a tile into a global tensor";
  let description = [{
    Writes the tile into the window that starts at `indices`. Elements at
    or past the `bounds` (below 2^31, as for `tile.load`) are not written.
    Of threads that hold the same element of a sliced tile, one writes it. With `transpose`, element
    (i, j) of a 2-D tile goes to position (j, i) of the window (the bounds
    are those of the window's dimensions), as when a GEMM computed the
    transpose of the result for a better M.
  }];
  let arguments = (ins Tile_RegTile:$value, AnyMemRef:$dest,
                       Variadic<Index>:$indices, Variadic<Index>:$bounds,
                       UnitAttr:$transpose);
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` (`bounds` `[` $bounds^ `]`)?
    attr-dict `:` qualified(type($value)) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def Tile_ScatterAddRowsOp : Tile_Op<"scatter_add_rows", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Atomically adds the rows of a tile into rows picked by index";
  let description = [{
    For each row `r` of the f32 tile, adds it to `dest[rows[r], column ..
    column + N)` with relaxed global atomics (`red.global.add`). A negative
    index skips the row: nothing is read or written for it. A repeated index
    adds each time. The additions are 16-byte `red.global.add.v4.f32` where
    a thread holds four contiguous columns (an `#tile.mma` tile: lane pairs
    exchange halves first), so `dest` must be 16-byte aligned with a row
    pitch and `column` that are multiples of 4.

    With `staging` (a shared f32 tile of the value's shape, unswizzled, used
    by one warpgroup), the warpgroup writes the value there and the tensor
    memory accelerator adds each row (`cp.reduce.async.bulk .add.f32`) while
    the threads go on: they only wait, before writing the tile again, until
    the previous reductions have read it. The kernel waits for all of them
    before it exits. Rows are then whole: `column` and the row pitch must be
    multiples of 4 and `N * 4` bytes a multiple of 16.
    `tile-stage-scatters` adds staging where shared memory allows.

    With `interleaved`, `dest`'s columns are stored in the order in which
    a thread of an `#tile.mma` tile holds them: in each 16 columns, column
    `8 * h + 2 * q + e` lies at `4 * q + 2 * h + e`. Each thread then adds
    16 contiguous bytes of its own registers, with no lane exchange (which
    waited on the reductions in flight). The value's columns, `column` and
    `dest`'s columns must be multiples of 16; `tile.load {interleaved}` reads such a
    matrix back in the natural order.

    With `scale`, `dest` is an i64 matrix of fixed-point numbers: each
    element `x` adds `round(x * scale)` with a 64-bit integer
    `red.global.add.u64` (from a `#tile.mma` value of 16k columns, after a
    lane exchange that gives each warp instruction whole 128-byte lines of
    one row). Integer sums do not depend on the order of the
    additions, so the result is the same bitwise whatever order the CTAs
    add in (a deterministic reduction). Sums must stay below 2^63 / scale
    in magnitude; the resolution is 1 / scale. An element that cannot be
    converted (not finite, or `x * scale` at least 2^63 in magnitude) adds
    a clamped value, NaN zero; with `overflow` (an i32 memref of `dest`'s
    rows) its row also gets `overflow[row] |= 1` (`red.global.or`,
    predicated off where every element converts), so that the reader can
    tell the row is not the sum.

    ```mlir
    tile.scatter_add_rows %dkv, %acc[%rows, %c0] scale %s overflow(%bad : memref<?xi32>)
        : !tile.reg<64x64xf32>, memref<?x?xi64>, !tile.reg<64xi32>
    ```
  }];
  let arguments = (ins Tile_RegTile:$value, AnyMemRef:$dest,
                       Tile_RegTile:$rows, Index:$column, Optional<F32>:$scale,
                       Optional<AnyMemRef>:$overflow,
                       Optional<Tile_SmemTile>:$staging, UnitAttr:$interleaved);
  let assemblyFormat = [{
    $value `,` $dest `[` $rows `,` $column `]` (`scale` $scale^)?
    (`overflow` `(` $overflow^ `:` qualified(type($overflow)) `)`)? (`staging` $staging^)?
    attr-dict `:`
    qualified(type($value)) `,` qualified(type($dest)) `,` qualified(type($rows))
    (`,` qualified(type($staging))^)?
  }];
  let hasVerifier = 1;
}

def Tile_StoreRowsOp : Tile_Op<"store_rows", [MemoryEffects<[MemWrite]>]> {
  let summary = "Stores the rows of a tile into rows of a matrix picked by index";
  let description = [{
    Row `r` of the 2-D tile goes to `dest[rows[r], column .. column + N)`;
    with `transpose`, column `j` goes to `dest[rows[j], column .. column +
    M)`, as when a GEMM computed the transpose of the result. A negative
    index writes nothing. Of threads that hold the same element, one writes
    it. The rows are computed like those of `tile.gather_rows`: a tile of
    (token, head) columns writes each to its own row of dq.
  }];
  let arguments = (ins Tile_RegTile:$value, AnyMemRef:$dest, Tile_RegTile:$rows,
                       Index:$column, UnitAttr:$transpose);
  let assemblyFormat = [{
    $value `,` $dest `[` $rows `,` $column `]` attr-dict `:`
    qualified(type($value)) `,` qualified(type($dest)) `,` qualified(type($rows))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elements by position: gathers, scatters and atomics
//===----------------------------------------------------------------------===//
//
// The position of an element of a memref (identity layout) or of a shared
// tile is its row-major linear index, an i32 (below 2^31). A negative
// position reads and writes nothing. Threads that hold the same element of
// a sliced tile access it once.

def Tile_GatherOp : Tile_Op<"gather", [Tile_SameLayoutTiles,
    MemoryEffects<[MemRead]>]> {
  let summary = "Reads the elements of a tensor or shared tile at given positions";
  let description = [{
    Element `i` of the result is the element at position `positions[i]` of
    `source`. With `pad`, a negative position reads nothing and gives `pad`;
    without, every position must be one of `source` (no check is made: the
    cheapest form, for positions that are valid by construction).

    ```mlir
    %lse_cols = tile.gather %lse[%cols] pad %inf
        : memref<?x?xf32>, !tile.reg<32xi32>, f32 -> !tile.reg<32xf32>
    ```
  }];
  let arguments = (ins Tile_MemRefOrSmemTile:$source, Tile_RegTile:$positions,
                       Optional<AnyType>:$pad);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = [{
    $source `[` $positions `]` (`pad` $pad^)? attr-dict `:` qualified(type($source)) `,`
    qualified(type($positions)) (`,` type($pad)^)? `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_ScatterOp : Tile_Op<"scatter", [Tile_SameLayoutTiles,
    MemoryEffects<[MemWrite]>]> {
  let summary = "Writes the elements of a tile to given positions of a tensor or shared tile";
  let description = [{
    Element `i` of `value` goes to position `positions[i]` of `dest`;
    nothing is written where the position is negative. Where elements go to
    one position, one of them lands there.

    ```mlir
    tile.scatter %keys, %out[%slots] : !tile.reg<1x1024xi32>, memref<?x?xi32>, !tile.reg<1x1024xi32>
    ```
  }];
  let arguments = (ins Tile_RegTile:$value, Tile_MemRefOrSmemTile:$dest,
                       Tile_RegTile:$positions);
  let assemblyFormat = [{
    $value `,` $dest `[` $positions `]` attr-dict `:` qualified(type($value)) `,`
    qualified(type($dest)) `,` qualified(type($positions))
  }];
  let hasVerifier = 1;
}

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [Tile_SameLayoutTiles,
    MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "Atomically combines the elements of a tile into given positions";
  let description = [{
    For each element `i`, atomically replaces the element at position
    `positions[i]` of `dest` by `kind(old, value[i])` and returns `old`;
    where the position is negative nothing is read or written and the result
    is 0. `add` and `max` on i32, `or` on i32, `add` on f32. Shared-memory
    atomics are the building block of sets and counters in a CTA.

    ```mlir
    %old = tile.atomic_rmw or %bits[%entry], %token_bit
        : !tile.reg<1x1024xi32>, !tile.smem<1x8192xi32>, !tile.reg<1x1024xi32>
    ```
  }];
  let arguments = (ins Tile_AtomicKindAttr:$kind, Tile_RegTile:$value,
                       Tile_MemRefOrSmemTile:$dest, Tile_RegTile:$positions);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = [{
    $kind $value `,` $dest `[` $positions `]` attr-dict `:` qualified(type($value)) `,`
    qualified(type($dest)) `,` qualified(type($positions))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

def Tile_AllocOp : Tile_Op<"alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "A shared-memory tile of the CTA";
  let description = [{
    Reserves shared memory for the lifetime of the kernel.
    `tile-allocate-shared` gives it its byte `offset` in the CTA's dynamic
    shared memory.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Tile_SmemTile:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_SliceOp : Tile_Op<"slice", [Pure, ViewLikeOpInterface]> {
  let summary = "A view of part of a shared-memory tile";
  let description = [{
    The sub-tile at `offsets` with the result's shape. A 3-D ring of stages
    may be sliced to a 2-D tile by giving the stage as the first offset.
    Offsets into swizzled tiles must keep whole swizzle atoms (8 rows, one
    column block); the layout pass checks constant offsets.
  }];
  let arguments = (ins Tile_SmemTile:$source, Variadic<Index>:$offsets);
  let results = (outs Tile_SmemTile:$result);
  let assemblyFormat = "$source `[` $offsets `]` attr-dict `:` qualified(type($source)) `to` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Value getViewSource() { return getSource(); }
  }];
}

def Tile_ReadOp : Tile_Op<"read", [MemoryEffects<[MemRead]>]> {
  let summary = "Loads a shared-memory tile into registers";
  let description = [{
    A 2-D shared tile into a register tile of its shape, or a `1 x N`
    shared tile (a table of values per column, say) into a 1-D register
    tile of `N` elements. Each thread reads its runs at its base address
    plus constants.
  }];
  let arguments = (ins Tile_SmemTile:$source);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_WriteOp : Tile_Op<"write", [AttrSizedOperandSegments]> {
  let summary = "Stores a register tile into a shared-memory tile";
  let description = [{
    A register tile into a 2-D shared tile of its shape, or a 1-D register
    tile of `N` elements into a `1 x N` shared tile. Element types may
    differ only as f32 -> bf16/f16 (rounded to nearest even), the usual
    step before a tile becomes a GEMM operand. The writes are visible to
    other threads and to the tensor cores after the next `tile.barrier`.

    With `cta %rank`, in a kernel with `cluster(n)`, the tile is written
    into `dest` of the CTA of that rank in the cluster (its distributed
    shared memory: `mapa`, then `st.shared::cluster`); a
    `tile.mbarrier_arrive` with `cta` at that CTA's barrier publishes it.
    With `cta %rank on %bars[%i]` as well, the stores are asynchronous
    (`st.async`): each completes its bytes on mbarrier `i` of `bars` in
    that CTA, whose phase then waits for them (the receiver declares the
    tile's bytes with `expect_tx`); the writer goes on at once.

    ```mlir
    tile.write %partial, %inbox cta %peer : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
    tile.write %partial, %inbox cta %peer on %full[%c0]
        : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi64>
    ```
  }];
  let arguments = (ins Tile_RegTile:$value, Arg<Tile_SmemTile, "", [MemWrite]>:$dest,
                       Optional<Index>:$cta,
                       Arg<Optional<Tile_SmemTile>, "", [MemRead, MemWrite]>:$bars,
                       Optional<Index>:$bar_index);
  let assemblyFormat = [{
    $value `,` $dest (`cta` $cta^)? (`on` $bars^ `[` $bar_index `]`)? attr-dict `:`
    qualified(type($value)) `,` qualified(type($dest)) (`,` qualified(type($bars))^)?
  }];
  let hasVerifier = 1;
}

def Tile_AsyncCopyOp : Tile_Op<"async_copy", [AttrSizedOperandSegments]> {
  let summary = "Starts copying a window of a global tensor into shared memory";
  let description = [{
    Copies the `R x C` window of the two trailing memref dimensions that
    starts at `indices` into `dest` with 16-byte `cp.async`. Rows at or past
    `bound` (an absolute row index) are zero-filled and not read. The copy
    is complete once its token has been waited for (`tile.wait`).
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$source, Variadic<Index>:$indices,
                       Optional<Index>:$bound, Arg<Tile_SmemTile, "", [MemWrite]>:$dest);
  let results = (outs Tile_Token:$token);
  let assemblyFormat = [{
    $source `[` $indices `]` (`bound` $bound^)? `into` $dest attr-dict `:`
    qualified(type($source)) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def Tile_GatherRowsOp : Tile_Op<"gather_rows", []> {
  let summary = "Starts gathering rows of a global matrix by index into shared memory";
  let description = [{
    Row `r` of `dest` receives `source[rows[r], column .. column + C)` by
    16-byte `cp.async`. A negative index zero-fills the row without reading
    memory, so invalid slots (-1 padding, masked keys) cost no traffic and
    never read out of bounds. The copy is complete once its token has been
    waited for.

    The warpgroups of the CTA share the work of one gather into a tile of
    the CTA (`rows` must be the same in all of them). With `per_warpgroup`,
    each warpgroup gathers on its own into its own tile, by its own rows.
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$source, Tile_RegTile:$rows,
                       Index:$column, Arg<Tile_SmemTile, "", [MemWrite]>:$dest,
                       UnitAttr:$per_warpgroup);
  let results = (outs Tile_Token:$token);
  let assemblyFormat = [{
    $source `[` $rows `,` $column `]` `into` $dest attr-dict `:`
    qualified(type($source)) `,` qualified(type($rows)) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def Tile_WaitOp : Tile_Op<"wait", []> {
  let summary = "Waits until asynchronous copies are visible to the CTA";
  let description = [{
    Blocks until the copy that produced `token`, and every copy started
    before it by this thread, is complete, then synchronizes the CTA so
    that all threads see the data.
  }];
  let arguments = (ins Variadic<Tile_Token>:$tokens);
  let assemblyFormat = "($tokens^)? attr-dict";
}

def Tile_AsyncWaitOp : Tile_Op<"async_wait", []> {
  let summary = "Waits until at most `pending` groups of copies are in flight";
  let description = [{
    The form of `tile.wait` produced by software pipelining: this thread's
    copies except the `pending` most recently started groups are complete.
    It does not synchronize the CTA; a `tile.barrier` follows it.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>]>:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def Tile_BarrierOp : Tile_Op<"barrier", []> {
  let summary = "Synchronizes the threads of the CTA, or of some warpgroups";
  let description = [{
    Without `warpgroups`, every thread of the CTA waits for all the others
    (`bar.sync 0`). With `warpgroups`, only the threads of those warpgroups
    take part, on a named barrier (`bar.sync id, 128 * n`): the conversion
    gives warpgroup w alone barrier 1 + w and each other set of warpgroups
    a barrier of its own, of the 16 a CTA has. Inside `tile.warp_specialize`
    only the scoped form is allowed: the other warpgroups run other code.

    ```mlir
    tile.barrier warpgroups([1, 2])
    ```
  }];
  let arguments = (ins OptionalAttr<DenseI64ArrayAttr>:$warpgroups);
  let assemblyFormat = "(`warpgroups` `(` $warpgroups^ `)`)? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::DenseI64ArrayAttr()); }]>];
  let hasVerifier = 1;
}

def Tile_WarpSpecializeOp : Tile_Op<"warp_specialize", [NoTerminator,
    RecursiveMemoryEffects]> {
  let summary = "Runs a different region on each partition of the warpgroups";
  let description = [{
    The kernel's warpgroups are cut into consecutive partitions, one per
    region: region `r` runs on `warpgroups[r]` warpgroups (one each when
    `warpgroups` is left out), the first partition starting at warpgroup 0.
    Each of its threads first sets its register budget to `registers[r]`
    (`setmaxnreg`: a producer that only copies gives registers to the
    consumers that compute). The budgets are multiples of 8 in [24, 256]
    whose sum over the CTA fits the register file. `tile.warpgroup_id`
    stays the warpgroup's index in the CTA.

    `stages(n)` lets tile-lower-channels give each of its channels up to n
    slots, as shared memory allows (the channels filled by copies first:
    their depth hides the copies' latency); without it, one slot each
    unless the pass is told otherwise.

    Inside, ops that need the whole CTA (`tile.barrier` without
    `warpgroups`, CTA-wide `tile.gather_rows`, `tile.wait`) are not
    allowed; `tile.any` and split chains (tile-split-d) work over the
    partition's warpgroups. Partitions hand data over through channels
    (`tile.channel`), or through shared memory with mbarriers
    (`tile.mbarrier_*`) or scoped barriers.

    ```mlir
    tile.warp_specialize warpgroups([2, 1]) registers([232, 40]) {
      // warpgroups 0 and 1: compute
    }, {
      // warpgroup 2: gathers
    }
    ```

    It may also be written with one region for all its partitions (more
    budgets than regions): each op carrying `tile.partition = r` runs in
    partition r only, and so does every op that uses its results; the
    others run in each partition that needs them. tile-split-partitions
    gives each partition its region, so a loop that every role walks is
    written once:

    ```mlir
    tile.warp_specialize registers([256, 256]) {
      scf.for %j = %c0 to %n step %c64 {
        %rows = ...                                  // both partitions
        %g = tile.gather_rows ... {tile.partition = 0}
        tile.key_clock ... {tile.partition = 1}
      }
    }
    ```
  }];
  let arguments = (ins OptionalAttr<DenseI64ArrayAttr>:$warpgroups,
                       DenseI64ArrayAttr:$registers,
                       OptionalAttr<I64Attr>:$stages);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$partitions);
  // Hand-written: each region belongs to the op state as soon as it is
  // parsed, so a parse error in a later one frees nothing the parser still
  // refers to (the generated parser of variadic regions does).
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The warpgroups region `r` runs on: [first, first + count).
    std::pair<int64_t, int64_t> getPartitionWarpgroups(unsigned r);
    /// One region for more partitions, which tile-split-partitions splits.
    bool isUnsplit() { return getPartitions().size() == 1 && getRegisters().size() > 1; }
  }];
}

//===----------------------------------------------------------------------===//
// Channels between partitions
//===----------------------------------------------------------------------===//

def Tile_Channel : Type<CPred<"::llvm::isa<::sparse_mla::tile::ChannelType>($_self)">,
    "channel", "::sparse_mla::tile::ChannelType">;

def Tile_ChannelOp : Tile_Op<"channel", [MemoryEffects<[MemAlloc, MemWrite]>]> {
  let summary = "A ring of shared buffers that partitions hand over";
  let description = [{
    Partitions of one `tile.warp_specialize` hand data over through it: one
    partition puts (writes a slot of the ring, or starts copies into it), the
    others, and the producer itself, get (read it). Each side walks the
    slots in order, one slot per enter / exit pair:

    ```mlir
    %ch = tile.channel : !tile.channel<!tile.smem<64x576xbf16>>
    tile.warp_specialize registers([256, 256]) {
      %k = tile.put_enter %ch : !tile.channel<!tile.smem<64x576xbf16>>   // slot free
      %t = tile.gather_rows %kv[%rows, %c0] into %k {per_warpgroup} : ...
      tile.put_exit %ch after %t : !tile.channel<...>    // full once copied
    }, {
      %k = tile.get_enter %ch : !tile.channel<...>       // slot full
      ... read %k ...
      tile.get_exit %ch : !tile.channel<...>             // slot free again
    }
    ```

    The slot, its mbarriers and their phase parity are the lowering's
    (tile-lower-channels): a slot is full once every producer thread has
    put it (after its copies, with `after`), and free once every thread of
    every consuming partition has got it. So partitions that skip a slot
    must skip it all alike. A producer that gets its own channel takes
    each slot right after putting it (put_enter, put_exit, get_enter,
    get_exit in one block): its program order then frees the slot for it,
    and only the other partitions' exits are counted. Every thread of the
    CTA reaches this op (it initializes the barriers): it stands outside
    `tile.warp_specialize`.
  }];
  let results = (outs Tile_Channel:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::LogicalResult verifyProducerGets(::llvm::ArrayRef<::mlir::Operation *> users,
                                             unsigned producer);
  }];
}

class Tile_ChannelEnterOp<string mnemonic> : Tile_Op<mnemonic, [
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let arguments = (ins Tile_Channel:$channel);
  let results = (outs Variadic<Tile_SmemTile>:$buffers);
  let assemblyFormat = "$channel attr-dict `:` qualified(type($channel))";
  let hasVerifier = 1;
}

def Tile_PutEnterOp : Tile_ChannelEnterOp<"put_enter"> {
  let summary = "Waits for the next slot of a channel to be free and gives its buffers";
  let description = [{
    The producer's next slot, once every consumer has left it (its
    `tile.get_exit` of the slot's previous round). The first round of each
    slot is free at once. A `tile.put_exit` follows in the same block.
  }];
}

def Tile_GetEnterOp : Tile_ChannelEnterOp<"get_enter"> {
  let summary = "Waits for the next slot of a channel to be full and gives its buffers";
  let description = [{
    The consumer's next slot, once the producer has put it: its writes, and
    the copies its `tile.put_exit` waited on, are visible to this thread and
    to its tensor cores. A `tile.get_exit` follows in the same block.
  }];
}

def Tile_PutExitOp : Tile_Op<"put_exit", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Marks the producer's slot full";
  let description = [{
    Each producer thread's writes to the slot before it are published to
    the consumers. With `after %tokens` (copies into the slot), the thread's
    arrival waits for its copies to land instead, without blocking it
    (`cp.async.mbarrier.arrive.noinc`).
  }];
  let arguments = (ins Tile_Channel:$channel, Variadic<Tile_Token>:$copies);
  let assemblyFormat = [{
    $channel (`after` $copies^)? attr-dict `:` qualified(type($channel))
  }];
  let hasVerifier = 1;
}

def Tile_GetExitOp : Tile_Op<"get_exit", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Marks the consumer done with its slot";
  let description = [{
    The consumer's reads of the slot are complete (a synchronous GEMM reading
    it has returned); once every consumer has left it, the producer may fill
    it again.
  }];
  let arguments = (ins Tile_Channel:$channel);
  let assemblyFormat = "$channel attr-dict `:` qualified(type($channel))";
  let hasVerifier = 1;
}

def Tile_MBarrierInitOp : Tile_Op<"mbarrier_init", [MemoryEffects<[MemWrite]>]> {
  let summary = "Initializes shared-memory barriers, each expecting a count of arrivals";
  let description = [{
    `bars` is a `1 x N` shared tile of i64: N mbarriers. One thread of the
    CTA initializes each to expect `counts` arrivals per phase (one count
    for all, or one per barrier); the CTA then synchronizes, so every
    thread may use them. Every thread of the CTA must reach it (outside
    `tile.warp_specialize`).
  }];
  let arguments = (ins Tile_SmemTile:$bars, Variadic<Index>:$counts);
  let assemblyFormat = "$bars `,` $counts attr-dict `:` qualified(type($bars))";
  let hasVerifier = 1;
}

def Tile_MBarrierArriveOp : Tile_Op<"mbarrier_arrive", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Each calling thread arrives at an mbarrier";
  let description = [{
    Counts one arrival of each calling thread at mbarrier `index` of
    `bars` (release: its earlier writes to shared memory are visible to a
    thread whose `tile.mbarrier_wait` sees the phase complete, wgmma
    included: a proxy fence precedes the arrival). With
    `after_copies`, the arrival happens instead once the thread's earlier
    `cp.async` copies (`tile.gather_rows`, `tile.async_copy`) have landed
    (`cp.async.mbarrier.arrive.noinc`): copies complete on the barrier.
    With `expect_tx`, one thread of the warpgroup also adds `bytes` of
    asynchronous transactions the phase waits for.
    With `cta %rank`, in a kernel with `cluster(n)`, the arrival is at the
    barrier of the CTA of that rank (release at cluster scope: the thread's
    earlier `tile.write ... cta` are visible to that CTA's waiters).
    With `reads_only`, the thread only read what the barrier guards (a
    consumer leaving a buffer, its wgmma waited for): no proxy fence.
  }];
  let arguments = (ins Tile_SmemTile:$bars, Index:$index, UnitAttr:$after_copies,
                       Optional<Index>:$expect_tx, Optional<Index>:$cta, UnitAttr:$reads_only);
  let assemblyFormat = [{
    $bars `[` $index `]` (`expect_tx` $expect_tx^)? (`cta` $cta^)? attr-dict `:` qualified(type($bars))
  }];
  let hasVerifier = 1;
}

def Tile_MBarrierWaitOp : Tile_Op<"mbarrier_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits until a phase of an mbarrier has completed";
  let description = [{
    Waits until the phase of mbarrier `index` of `bars` whose parity is
    `parity` (0 or 1) has completed (`mbarrier.try_wait.parity` in a loop),
    with acquire semantics; a proxy fence after it lets the thread's wgmma
    read what copies completed on the barrier. The phase before the first
    counts as complete:
    a producer's first wait for a free buffer, with parity 1, returns at
    once. With `for_writes`, the thread next only writes what the barrier
    guards (a producer taking a free buffer): no proxy fence.
  }];
  let arguments = (ins Tile_SmemTile:$bars, Index:$index, I32:$parity, UnitAttr:$for_writes);
  let assemblyFormat = [{
    $bars `[` $index `]` `,` $parity attr-dict `:` qualified(type($bars))
  }];
  let hasVerifier = 1;
}

def Tile_CounterAddOp : Tile_Op<"counter_add", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "One thread of each calling warpgroup adds to a global counter";
  let description = [{
    Atomically adds `amount` to element `[row, col]` of the i32 matrix
    `counter`, once per warpgroup that runs it (by its first thread),
    relaxed at GPU scope: it orders nothing. With `tile.counter_wait` it
    makes a progress clock between CTAs that is advisory only (no result
    depends on it), as the key ranges of the backward use it to keep the
    CTAs that run together on the same keys.

    ```mlir
    tile.counter_add %clock[%round, %range], %one : memref<?x?xi32>
    ```
  }];
  let arguments = (ins AnyMemRef:$counter, Index:$row, Index:$col, I32:$amount);
  let assemblyFormat = [{
    $counter `[` $row `,` $col `]` `,` $amount attr-dict `:` qualified(type($counter))
  }];
  let hasVerifier = 1;
}

def Tile_CounterWaitOp : Tile_Op<"counter_wait", [MemoryEffects<[MemRead]>]> {
  let summary = "Polls a global counter until it reaches a target, for a bounded time";
  let description = [{
    Reads element `[row, col]` of the i32 matrix `counter` (bypassing L1),
    pausing between reads, until it is at least `target` or `polls` reads
    have been made; returns whether the target was reached. The 32 threads
    of each warp run it together and decide together (a vote: the result is
    the same in a warp's threads); no barrier is involved, so the warps of a
    warpgroup may leave at different reads. Being bounded, it cannot hang whatever the other CTAs do (one
    that never runs, a counter that never moves): what waits on it must be
    an optimization, never a condition of a correct result.

    ```mlir
    %reached = tile.counter_wait %clock[%round, %r], %ctas, %polls : memref<?x?xi32>
    ```
  }];
  let arguments = (ins AnyMemRef:$counter, Index:$row, Index:$col, I32:$target,
                       I32:$polls);
  let results = (outs I1:$reached);
  let assemblyFormat = [{
    $counter `[` $row `,` $col `]` `,` $target `,` $polls attr-dict `:` qualified(type($counter))
  }];
  let hasVerifier = 1;
}

def Tile_AnyOp : Tile_Op<"any", []> {
  let summary = "Whether any element of an i1 tile is true, in every thread that runs it";
  let description = [{
    ORs the elements of `pred` over the warpgroups that run this code (the
    CTA, or inside `tile.warp_specialize` the region's partition) and
    returns the same i1 to each of their threads, so that it can steer
    control flow that contains barriers. Like a barrier, every one of those
    threads must reach it, and none passes before all have: it also orders
    their earlier shared-memory accesses before their later ones. Used to
    skip a block of slots that are all invalid.

    ```mlir
    %live = tile.any %valid : !tile.reg<64xi1>
    ```
  }];
  let arguments = (ins Tile_RegTile:$pred);
  let results = (outs I1:$result);
  let assemblyFormat = "$pred attr-dict `:` qualified(type($pred))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor cores
//===----------------------------------------------------------------------===//

def Tile_GemmOp : Tile_Op<"gemm", [MemoryEffects<[MemRead]>,
    TypesMatchWith<"accumulator and result have one type", "acc", "result", "$_self">]> {
  let summary = "Matrix product on the tensor cores, accumulated in f32";
  let description = [{
    `result = acc + op(a) * op(b)` where `op(x)` is `x` or its transpose.
    `a` is a shared tile or a register tile in the accumulator layout
    (converted to bf16 with the `mma` layout), `b` a shared tile, both
    bf16 or f16; `acc` is an f32 register tile. Each warpgroup computes its
    own product on 64-row blocks: M is a multiple of 64, N a multiple of 8,
    K a multiple of 16. Lowers to `wgmma.mma_async`, N split into pieces of
    at most 256; with A in registers, to inline PTX (the NVVM op reads A
    from shared memory only), the accumulator layout of one GEMM being the
    A layout of the next. An f32 accumulator costs N/2 registers per thread for each
    64 rows, so wide products are cut into column chunks by `tile-split-d`.

    With `async`, the product is a wgmma group that the warpgroup does not
    wait for: the threads go on, and the result may be used only through
    `tile.gemm_wait`, which says how many younger groups may still run, or
    as the accumulator of the next asynchronous product of the block, which
    then joins its group (`dKV = dS^T Q + P^T dO` as one group). Without
    `async`, the warpgroup waits for all of its groups before the result is
    used (adjacent products form one group).
  }];
  let arguments = (ins Tile_RegOrSmemTile:$a, Tile_SmemTile:$b, Tile_RegTile:$acc,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b, UnitAttr:$async);
  let results = (outs Tile_RegTile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` qualified(type($acc))
  }];
  let extraClassDeclaration = [{
    /// The asynchronous product of this block whose group this one joins
    /// (it is asynchronous and accumulates into that product), or null.
    GemmOp getJoinedGroup();
  }];
  let hasVerifier = 1;
}

def Tile_GemmWaitOp : Tile_Op<"gemm_wait", [Tile_SameLayoutTiles,
    AllTypesMatch<["values", "results"]>]> {
  let summary = "Waits for asynchronous GEMMs and gives their results";
  let description = [{
    Waits until at most `pending` of the warpgroup's wgmma groups are still
    running (`wgmma.wait_group pending`), then returns its operands, each
    the result of a `tile.gemm {async}`, as values the threads may read.
    Groups complete in the order they were issued: after `S = gemm {async}`
    and `dP = gemm {async}`, `tile.gemm_wait %s {pending = 1}` gives S while
    dP still runs.

    ```mlir
    %s2 = tile.gemm_wait %s {pending = 1} : !tile.reg<64x32xf32>
    ```
  }];
  let arguments = (ins Variadic<Tile_RegTile>:$values,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let results = (outs Variadic<Tile_RegTile>:$results);
  let assemblyFormat = "$values attr-dict `:` qualified(type($values))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

def Tile_PipelinedForOp : Tile_Op<"pipelined_for", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "A loop whose asynchronous copies run ahead of its compute";
  let description = [{
    Has the semantics of `scf.for`. The asynchronous copies at the head of
    the body (and the index computations they need) are issued `stages - 1`
    iterations ahead into a ring of `stages` buffers by
    `tile-pipeline-loops`; with one stage, the copy for the next iteration
    starts as soon as the last use of the buffer in the current one is
    done.
  }];
  let arguments = (ins Index:$lowerBound, Index:$upperBound, Index:$step,
                       Variadic<AnyType>:$initArgs,
                       ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<4>]>:$stages);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Value getInductionVar() { return getBody().getArgument(0); }
    ::mlir::Block::BlockArgListType getRegionIterArgs() {
      return getBody().getArguments().drop_front();
    }
  }];
}

#endif
