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

/// The options of the shipped pipeline, `sparse-mla-to-ptx` (and, with
/// Self, of the benchmark pipeline, which has them all).
template <typename Self>
struct TileToPTXOptionsBase : public mlir::PassPipelineOptions<Self> {
  template <typename T>
  using Option = mlir::detail::PassOptions::Option<T>;
  template <typename T>
  using ListOption = mlir::detail::PassOptions::ListOption<T>;

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
  // Schedule knobs (tile-schedule; empty or 0: as the kernel says).
  ListOption<int64_t> registers{*this, "registers",
                                llvm::cl::desc("Register budget of each partition "
                                               "of every tile.warp_specialize")};
  ListOption<int64_t> partitionRows{*this, "partition-rows",
                                    llvm::cl::desc("First dQ^T row of each partition "
                                                   "(tile.partition_rows)")};
  ListOption<int64_t> partitionCols{*this, "partition-cols",
                                    llvm::cl::desc("First dKV column of each partition "
                                                   "(tile.partition_cols)")};
  Option<int64_t> channelStages{*this, "channel-stages",
                                llvm::cl::desc("Most stages of every channel, as "
                                               "shared memory allows (tile-lower-"
                                               "channels' stages)"),
                                llvm::cl::init(0)};
  Option<bool> stageScatters{*this, "stage-scatters",
                             llvm::cl::desc("tile-stage-scatters: row scatters through "
                                            "shared memory and the TMA where room "
                                            "allows (slower in the warp-specialized "
                                            "backward: bench/NOTES.md)"),
                             llvm::cl::init(false)};
  Option<bool> splitDOverlap{*this, "split-d-overlap",
                             llvm::cl::desc("tile-split-d's `overlap`: issue "
                                            "each dKV piece before the previous "
                                            "one is scattered, where it fits"),
                             llvm::cl::init(true)};
};

struct TileToPTXOptions : public TileToPTXOptionsBase<TileToPTXOptions> {};

/// `sparse-mla-bench-to-ptx`: the shipped pipeline's options, and
/// instruments for timing and tests that the shipped kernels never carry.
struct BenchToPTXOptions : public TileToPTXOptionsBase<BenchToPTXOptions> {
  // Ablations, for timing only (tile-ablate; bench/ablate.py).
  Option<bool> idleGathers{*this, "idle-gathers",
                           llvm::cl::desc("Gathers of partitions read no row"),
                           llvm::cl::init(false)};
  ListOption<int64_t> idleScatters{*this, "idle-scatters",
                                   llvm::cl::desc("Partitions whose scatters add no row")};
  ListOption<int64_t> dropScatters{*this, "drop-scatters",
                                   llvm::cl::desc("Partitions whose scatters and their "
                                                  "products are erased")};
  // Counts (tile-count-ops): the tests' count of blocks computed.
  Option<std::string> countOp{*this, "count-op",
                              llvm::cl::desc("Count how often each CTA runs the first "
                                             "op of this name (an op_counts argument)"),
                              llvm::cl::init("")};
};

/// tile kernels -> layouts, pipelining, shared memory -> gpu/NVVM -> PTX.
void buildTileToPTXPipeline(mlir::OpPassManager &pm,
                            const TileToPTXOptions &options);

/// The same, with the benchmark's ablations and counts.
void buildBenchToPTXPipeline(mlir::OpPassManager &pm,
                             const BenchToPTXOptions &options);

/// Registers `sparse-mla-to-ptx` and `sparse-mla-bench-to-ptx`.
void registerSparseMLAPipelines();

} // namespace sparse_mla

#endif
