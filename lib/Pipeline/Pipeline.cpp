//===- Pipeline.cpp - From tile kernels to PTX and cubin ------------------===//
#include "sparse-mla/Pipeline/Pipeline.h"
#include "sparse-mla/Conversion/Passes.h"
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace sparse_mla;

/// Shared-memory pointers of 32 bits, not 64: a kernel holds dozens of
/// shared addresses, and 64-bit ones double their registers. The NVPTX
/// backend has this only as a command-line option.
static void useShortSharedPointers() {
  auto &opts = llvm::cl::getRegisteredOptions();
  auto it = opts.find("nvptx-short-ptr");
  if (it != opts.end())
    if (auto *opt = static_cast<llvm::cl::opt<bool> *>(it->second))
      opt->setValue(true);
}

/// The pipeline, with `instrument` run after tile-split-partitions (the
/// benchmark's ablations and counts; nothing in the shipped pipeline).
template <typename Options>
static void build(OpPassManager &pm, const Options &options,
                  llvm::function_ref<void(OpPassManager &)> instrument) {
  useShortSharedPointers();
  pm.addPass(tile::createTileSpecializePass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileDecodeWorkPass());
  pm.addNestedPass<tile::KernelOp>(smla::createSparseMLALowerToTilePass());
  tile::TileSchedulePassOptions schedule;
  schedule.registers.assign(options.registers.begin(), options.registers.end());
  schedule.partitionRows.assign(options.partitionRows.begin(), options.partitionRows.end());
  schedule.partitionCols.assign(options.partitionCols.begin(), options.partitionCols.end());
  pm.addNestedPass<tile::KernelOp>(tile::createTileSchedulePass(schedule));
  pm.addNestedPass<tile::KernelOp>(tile::createTileSplitPartitionsPass());
  instrument(pm);
  // Before the channels are lowered: tile-split-d moves their exits below
  // the pieces it emits.
  tile::TileSplitDPassOptions splitD;
  splitD.overlap = options.splitDOverlap;
  pm.addNestedPass<tile::KernelOp>(tile::createTileSplitDPass(splitD));
  tile::TileLowerChannelsPassOptions channels;
  channels.stages = options.channelStages;
  pm.addNestedPass<tile::KernelOp>(tile::createTileLowerChannelsPass(channels));
  pm.addNestedPass<tile::KernelOp>(smla::createSparseMLAExpandKeyClocksPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTilePipelineLoopsPass());
  // TMA bulk reductions through shared memory, off by default: in the
  // warp-specialized backward they made the dKV warpgroup 2x slower than
  // red.v4 from registers (bench/NOTES.md).
  if (options.stageScatters)
    pm.addNestedPass<tile::KernelOp>(tile::createTileStageScattersPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileAssignLayoutsPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileAllocateSharedPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileMaterializeWaitsPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileCheckSharedHazardsPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileGroupGemmsPass());
  pm.addNestedPass<tile::KernelOp>(tile::createTileAssignBarrierIdsPass());
  pm.addPass(tile::createTileRecordManifestPass());
  pm.addPass(createConvertTileToNVVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = "isa";
  nvvm.optLevel = 3;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  if (!options.output.empty())
    pm.addPass(createEmitKernelsPass({options.output, options.chip}));
}

void sparse_mla::buildTileToPTXPipeline(OpPassManager &pm, const TileToPTXOptions &options) {
  build(pm, options, [](OpPassManager &) {});
}

void sparse_mla::buildBenchToPTXPipeline(OpPassManager &pm, const BenchToPTXOptions &options) {
  build(pm, options, [&](OpPassManager &nested) {
    tile::TileAblatePassOptions ablate;
    ablate.idleGathers = options.idleGathers;
    ablate.idleScatters.assign(options.idleScatters.begin(), options.idleScatters.end());
    ablate.dropScatters.assign(options.dropScatters.begin(), options.dropScatters.end());
    nested.addNestedPass<tile::KernelOp>(tile::createTileAblatePass(ablate));
    tile::TileCountOpsPassOptions count;
    count.op = options.countOp;
    nested.addNestedPass<tile::KernelOp>(tile::createTileCountOpsPass(count));
  });
}

void sparse_mla::registerSparseMLAPipelines() {
  PassPipelineRegistration<TileToPTXOptions>(
      "sparse-mla-to-ptx",
      "Lowers tile kernels to PTX for Hopper and, with output=<prefix>, "
      "writes <prefix>.ptx, .cubin (when ptxas is found) and .json",
      buildTileToPTXPipeline);
  PassPipelineRegistration<BenchToPTXOptions>(
      "sparse-mla-bench-to-ptx",
      "sparse-mla-to-ptx with the benchmark's instruments: ablations "
      "(tile-ablate) and counts (tile-count-ops); never shipped",
      buildBenchToPTXPipeline);
}
