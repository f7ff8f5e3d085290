//===- Passes.td - Conversions out of the tile dialect -----*- tablegen -*-===//
#ifndef SPARSE_MLA_CONVERSION_PASSES
#define SPARSE_MLA_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileToNVVMPass : Pass<"convert-tile-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lowers tile kernels to gpu.func with NVVM, vector and LLVM ops";
  let description = [{
    Moves every `tile.kernel` into a `gpu.func` of the `gpu.module`
    @sparse_mla_kernels and lowers its
    ops for the layouts chosen by `tile-assign-layouts`: register tiles
    become per-thread vectors; loads and stores become 16-byte global
    accesses; copies and gathers `cp.async` with zero-fill; GEMMs
    `wgmma.mma_async` on shared-memory descriptors; scatter-adds
    `red.global.add`; reductions warp shuffles. Memref arguments keep the
    standard (non-bare) descriptor ABI and move to the global address space.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"
  ];
}

#endif
