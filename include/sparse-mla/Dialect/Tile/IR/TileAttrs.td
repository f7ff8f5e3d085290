//===- TileAttrs.td - Layouts and enums of the tile dialect -*- tablegen -*-===//
#ifndef SPARSE_MLA_TILE_ATTRS
#define SPARSE_MLA_TILE_ATTRS

include "sparse-mla/Dialect/Tile/IR/TileBase.td"

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tile_BlockedLayoutAttr : Tile_Attr<"BlockedLayout", "blocked"> {
  let summary = "Row-major distribution of a 2-D register tile over a warpgroup";
  let description = [{
    Thread `t` (0..127) of the warpgroup holds, in each row it covers,
    runs of `vector` contiguous elements. `lanes` threads share a row:
    thread `t` covers rows `t / lanes + k * (128 / lanes)` and columns
    `(t % lanes) * vector + m * lanes * vector`. The layout of coalesced
    16-byte global accesses.
  }];
  let parameters = (ins "unsigned":$vector, "unsigned":$lanes);
  let assemblyFormat = "`<` `vector` `=` $vector `,` `lanes` `=` $lanes `>`";
  let genVerifyDecl = 1;
}

def Tile_MmaLayoutAttr : Tile_Attr<"MmaLayout", "mma"> {
  let summary = "The wgmma accumulator distribution of a register tile";
  let description = [{
    The layout in which `wgmma.mma_async` leaves its f32 accumulator: warp
    `w`, lane `l` hold rows `16 w + l / 4` and `16 w + l / 4 + 8` of each
    64-row block, columns `8 i + 2 (l % 4)` and `8 i + 2 (l % 4) + 1`.
  }];
}

def Tile_SliceLayoutAttr : Tile_Attr<"SliceLayout", "slice"> {
  let summary = "A 1-D register tile along one dimension of a 2-D layout";
  let description = [{
    The vector that remains of a 2-D tile in layout `parent` when dimension
    `dim` is removed: `dim = 1` gives one value per row (the result of a
    row reduction), `dim = 0` one value per column. Threads that share a row
    (column) in the parent hold the same value.
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `dim` `=` $dim `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

def Tile_SharedLayoutAttr : Tile_Attr<"SharedLayout", "shared"> {
  let summary = "Placement of a 2-D tile in shared memory";
  let description = [{
    The tile is stored in column blocks of `swizzle` bytes (the whole row
    when `swizzle` is 0); block `b` starts at `b * block_stride` bytes,
    row `r` of a block at `r * pitch`. With a swizzle of 32, 64 or 128
    bytes, the 16-byte chunk index (address bits 4-6) is XORed with the
    128-byte line index (address bits 7-9), exactly as the wgmma
    descriptors and TMA expect; such tiles are 1024-byte aligned.
  }];
  let parameters = (ins "unsigned":$swizzle, "int64_t":$pitch,
                        "int64_t":$block_stride);
  let assemblyFormat = [{
    `<` `swizzle` `=` $swizzle `,` `pitch` `=` $pitch `,`
        `block_stride` `=` $block_stride `>`
  }];
  let genVerifyDecl = 1;
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "row reduction", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::sparse_mla::tile";
  let genSpecializedAttr = 0;
}
def Tile_ReduceKindAttr : EnumAttr<Tile_Dialect, Tile_ReduceKind, "reduce_kind">;

def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "atomic combination", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"bitwise_or", 1, "or">, I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::sparse_mla::tile";
  let genSpecializedAttr = 0;
}
def Tile_AtomicKindAttr : EnumAttr<Tile_Dialect, Tile_AtomicKind, "atomic_kind">;

def Tile_Dim : I32EnumAttr<"Dim", "grid dimension", [
    I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"y", 1>, I32EnumAttrCase<"z", 2>]> {
  let cppNamespace = "::sparse_mla::tile";
  let genSpecializedAttr = 0;
}
def Tile_DimAttr : EnumAttr<Tile_Dialect, Tile_Dim, "dim">;

#endif
