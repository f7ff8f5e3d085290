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
    memory of its own. `tile-allocate-shared` gives each warpgroup a region
    as large as the largest op's `getScratchBytes()` (once layouts are
    assigned; every such op begins with a barrier of its warpgroup, so ops
    share the region) and records the first region's byte offset and the
    regions' stride as the op's `scratch` attribute, [offset, stride].
  }];
  let methods = [
    InterfaceMethod<"Bytes of shared scratch the lowering needs (0: none); "
                    "register tiles must have their layouts.",
                    "int64_t", "getScratchBytes">,
    InterfaceMethod<"The byte offset of warpgroup 0's scratch and the "
                    "stride of the warpgroups' regions, once allocated.",
                    "std::optional<std::pair<int64_t, int64_t>>", "getScratchPlace", (ins), [{}], [{
      auto a = $_op->template getAttrOfType<::mlir::DenseI64ArrayAttr>("scratch");
      if (!a || a.size() != 2)
        return std::nullopt;
      return std::make_pair(a[0], a[1]);
    }]>,
    InterfaceMethod<"Records the byte offset of warpgroup 0's scratch and "
                    "the stride of the warpgroups' regions.",
                    "void", "setScratchPlace", (ins "int64_t":$offset, "int64_t":$stride), [{}], [{
      ::mlir::Builder b($_op->getContext());
      $_op->setAttr("scratch", b.getDenseI64ArrayAttr({offset, stride}));
    }]>,
  ];
}

#endif
