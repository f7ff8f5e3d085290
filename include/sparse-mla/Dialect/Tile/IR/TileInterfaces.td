//===- TileInterfaces.td - Traits and interfaces of tile ops -*- tablegen -*-===//
#ifndef SPARSE_MLA_TILE_INTERFACES
#define SPARSE_MLA_TILE_INTERFACES

include "mlir/IR/OpBase.td"

// The register tiles an op takes and gives hold their elements in one
// layout: tile-assign-layouts ties them, the verifier checks them.
def Tile_SameLayoutTiles : NativeOpTrait<"SameLayoutTiles"> {
  let cppNamespace = "::sparse_mla::tile::OpTrait";
}

def Tile_ScratchOpInterface : OpInterface<"ScratchOpInterface"> {
  let cppNamespace = "::sparse_mla::tile";
  let description = [{
    An op whose lowering exchanges values between warps through shared
    memory of its own. `tile-allocate-shared` reserves `getScratchBytes()`
    for it (once layouts are assigned) and records the byte offset as the
    op's `scratch` attribute.
  }];
  let methods = [
    InterfaceMethod<"Bytes of shared scratch the lowering needs (0: none); "
                    "register tiles must have their layouts.",
                    "int64_t", "getScratchBytes">,
    InterfaceMethod<"The byte offset of the scratch, once allocated.",
                    "std::optional<int64_t>", "getScratchOffset", (ins), [{}], [{
      if (auto a = $_op->template getAttrOfType<::mlir::IntegerAttr>("scratch"))
        return a.getInt();
      return std::nullopt;
    }]>,
    InterfaceMethod<"Records the byte offset of the scratch.",
                    "void", "setScratchOffset", (ins "int64_t":$offset), [{}], [{
      ::mlir::Builder b($_op->getContext());
      $_op->setAttr("scratch", b.getI64IntegerAttr(offset));
    }]>,
  ];
}

#endif
