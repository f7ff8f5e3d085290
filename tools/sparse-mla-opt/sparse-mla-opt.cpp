//===- sparse-mla-opt.cpp - The sparse-mla compiler driver ----------------===//
//
// mlir-opt with the tile and smla dialects, their passes and the sparse-mla-to-ptx
// pipeline, the upstream dialects and passes, and the NVVM target.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Conversion/Passes.h"
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Pipeline/Pipeline.h"

#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registry.insert<sparse_mla::tile::TileDialect, sparse_mla::smla::SparseMLADialect>();

  mlir::registerAllPasses();
  mlir::gpu::registerGPUToNVVMPipeline();
  sparse_mla::tile::registerTilePasses();
  sparse_mla::smla::registerSparseMLAPasses();
  sparse_mla::registerSparseMLAConversionPasses();
  sparse_mla::registerSparseMLAPipelinePasses();
  sparse_mla::registerSparseMLAPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "sparse-mla compiler driver\n", registry));
}
