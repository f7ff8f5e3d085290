//===- TileTypes.td - Types of the tile dialect ------------*- tablegen -*-===//
#ifndef SPARSE_MLA_TILE_TYPES
#define SPARSE_MLA_TILE_TYPES

include "sparse-mla/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_RegTileType : Tile_Type<"RegTile", "reg", [ShapedTypeInterface]> {
  let summary = "A tile held in the registers of a warpgroup";
  let description = [{
    A 1-D or 2-D tile distributed over the 128 threads of a warpgroup. The
    optional layout (`#tile.blocked`, `#tile.mma`, `#tile.slice`) says
    which thread holds which element; it is chosen by `tile-assign-layouts`
    when absent.
    Example: `!tile.reg<64x32xf32, #tile.mma>`.

    A dimension may be a shape parameter of the kernel, written `{name}`
    (`!tile.reg<64x{heads}xf32>`): `tile-specialize` binds it to each of the
    kernel's variants. Such a tile has no layout yet, and the checks that
    need its size wait until it is bound.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout,
                        OptionalArrayRefParameter<"::mlir::StringAttr">:$symbols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "::mlir::Type":$elementType, CArg<"::mlir::Attribute", "{}">:$layout,
        CArg<"::llvm::ArrayRef<::mlir::StringAttr>", "{}">:$symbols), [{
      return $_get(elementType.getContext(), shape, elementType, layout, symbols);
    }]>
  ];
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    RegTileType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                          ::mlir::Type elementType) const {
      return shape ? RegTileType::get(*shape, elementType, getLayout())
                   : RegTileType::get(getShape(), elementType, getLayout(), getSymbols());
    }
    RegTileType withLayout(::mlir::Attribute layout) const {
      return RegTileType::get(getShape(), getElementType(), layout, getSymbols());
    }
  }];
}

def Tile_SmemTileType : Tile_Type<"SmemTile", "smem", [ShapedTypeInterface]> {
  let summary = "A tile in shared memory";
  let description = [{
    A 2-D tile (or a ring of 2-D tiles when 3-D: the leading dimension is a
    stage index) in the shared memory of the CTA. The optional
    `#tile.shared` layout gives its swizzle and strides. Dimensions may be
    shape parameters, as in `!tile.reg`.
    Example: `!tile.smem<64x576xbf16>`, `!tile.smem<64x{dqk}xbf16>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout,
                        OptionalArrayRefParameter<"::mlir::StringAttr">:$symbols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "::mlir::Type":$elementType, CArg<"::mlir::Attribute", "{}">:$layout,
        CArg<"::llvm::ArrayRef<::mlir::StringAttr>", "{}">:$symbols), [{
      return $_get(elementType.getContext(), shape, elementType, layout, symbols);
    }]>
  ];
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    SmemTileType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                           ::mlir::Type elementType) const {
      return shape ? SmemTileType::get(*shape, elementType, getLayout())
                   : SmemTileType::get(getShape(), elementType, getLayout(), getSymbols());
    }
    SharedLayoutAttr getSharedLayout() const {
      return ::llvm::dyn_cast_if_present<SharedLayoutAttr>(getLayout());
    }
  }];
}

def Tile_TokenType : Tile_Type<"Token", "token"> {
  let summary = "Completion of an asynchronous copy into shared memory";
}

def Tile_ChannelType : Tile_Type<"Channel", "channel"> {
  let summary = "A ring of shared buffers handed from one partition to others";
  let description = [{
    `stages` slots, each holding one shared tile of every type in
    `buffers`: a producer partition fills a slot (`tile.put_enter` /
    `tile.put_exit`) while the consumers read the ones before it
    (`tile.get_enter` / `tile.get_exit`). tile-lower-channels gives it its
    buffers and mbarriers.
    Example: `!tile.channel<!tile.smem<64x32xbf16>, !tile.smem<64x32xbf16>, stages = 2>`.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::Type">:$buffers, "int64_t":$stages);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of shared memory the ring and its mbarriers take, or none while
    /// a buffer has shape parameters.
    std::optional<int64_t> getRingBytes() const;
    /// The shared tiles tile-lower-channels allocates for it: a ring per
    /// buffer type (3-D with more than one stage), then its mbarriers (full
    /// and, with `freeBarriers`, free for each stage).
    ::llvm::SmallVector<SmemTileType> getRingTiles(bool freeBarriers = true) const;
  }];
}

#endif
