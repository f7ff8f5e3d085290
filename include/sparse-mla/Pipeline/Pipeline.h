//===- Pipeline.h - From tile kernels to PTX and cubin ----------*- C++ -*-===//
#ifndef SPARSE_MLA_PIPELINE_PIPELINE_H
#define SPARSE_MLA_PIPELINE_PIPELINE_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace sparse_mla {

#define GEN_PASS_DECL
#include "sparse-mla/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sparse-mla/Pipeline/Passes.h.inc"

struct TileToPTXOptions : public mlir::PassPipelineOptions<TileToPTXOptions> {
  Option<std::string> output{*this, "output",
                             llvm::cl::desc("Path prefix of the PTX, cubin and "
                                            "manifest to write (none: only "
                                            "lower)"),
                             llvm::cl::init("")};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target GPU"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx83")};
  Option<bool> splitDOverlap{*this, "split-d-overlap",
                             llvm::cl::desc("tile-split-d's `overlap`: issue "
                                            "each dKV piece before the previous "
                                            "one is scattered, where it fits"),
                             llvm::cl::init(true)};
};

/// tile kernels -> layouts, pipelining, shared memory -> gpu/NVVM -> PTX.
void buildTileToPTXPipeline(mlir::OpPassManager &pm,
                            const TileToPTXOptions &options);

/// Registers `sparse-mla-to-ptx`.
void registerSparseMLAPipelines();

} // namespace sparse_mla

#endif
