//===- TileBase.td - The tile dialect ----------------------*- tablegen -*-===//
#ifndef SPARSE_MLA_TILE_BASE
#define SPARSE_MLA_TILE_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::sparse_mla::tile";
  let summary = "Warpgroup-level tiles for the sparse-MLA kernels";
  let description = [{
    The tile dialect describes GPU kernels for Hopper at the level of tiles
    held by a *warpgroup* (128 threads). A `tile.kernel` runs on a grid of
    CTAs, each made of `warpgroups` warpgroups; every warpgroup executes the
    kernel body on its own register tiles (`!tile.reg`), while shared-memory
    tiles (`!tile.smem`) belong to the whole CTA. Global tensors are memrefs.

    Register tiles and shared tiles may be written without a layout; the
    `tile-assign-layouts` pass picks how register tiles are distributed over
    the threads (`#tile.blocked`, `#tile.mma`, `#tile.slice`) and how shared
    tiles are swizzled (`#tile.shared`). Lowering then maps each op to the
    NVVM, vector, GPU and LLVM dialects.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // In TileAttrs.cpp and TileTypes.cpp, beside their storage classes.
    void registerAttributes();
    void registerTypes();
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif
