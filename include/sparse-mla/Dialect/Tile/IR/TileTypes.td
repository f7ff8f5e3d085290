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
    A 1-D or 2-D tile of statically known shape distributed over the 128
    threads of a warpgroup. The optional layout (`#tile.blocked`,
    `#tile.mma`, `#tile.slice`) says which thread holds which element; it
    is chosen by `tile-assign-layouts` when absent.
    Example: `!tile.reg<64x32xf32, #tile.mma>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "::mlir::Type":$elementType, CArg<"::mlir::Attribute", "{}">:$layout), [{
      return $_get(elementType.getContext(), shape, elementType, layout);
    }]>
  ];
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    RegTileType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                          ::mlir::Type elementType) const {
      return RegTileType::get(shape ? *shape : getShape(), elementType, getLayout());
    }
    RegTileType withLayout(::mlir::Attribute layout) const {
      return RegTileType::get(getShape(), getElementType(), layout);
    }
  }];
}

def Tile_SmemTileType : Tile_Type<"SmemTile", "smem", [ShapedTypeInterface]> {
  let summary = "A tile in shared memory";
  let description = [{
    A 2-D tile (or a ring of 2-D tiles when 3-D: the leading dimension is a
    stage index) in the shared memory of the CTA. The optional
    `#tile.shared` layout gives its swizzle and strides.
    Example: `!tile.smem<64x576xbf16>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "::mlir::Type":$elementType, CArg<"::mlir::Attribute", "{}">:$layout), [{
      return $_get(elementType.getContext(), shape, elementType, layout);
    }]>
  ];
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    SmemTileType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                           ::mlir::Type elementType) const {
      return SmemTileType::get(shape ? *shape : getShape(), elementType, getLayout());
    }
    SharedLayoutAttr getSharedLayout() const {
      return ::llvm::dyn_cast_if_present<SharedLayoutAttr>(getLayout());
    }
  }];
}

def Tile_TokenType : Tile_Type<"Token", "token"> {
  let summary = "Completion of an asynchronous copy into shared memory";
}

#endif
