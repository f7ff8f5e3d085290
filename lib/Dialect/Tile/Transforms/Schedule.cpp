//===- Schedule.cpp - A kernel's schedule knobs from options --------------===//
//
// The knobs live where the passes read them: budgets on tile.warp_specialize,
// shares on the GEMMs that partitions share, stages in the channel types.
// This pass overwrites them from its options, so that a build can try
// another schedule (bench/ablate.py) without touching the kernel text.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/SharedMemoryPlan.h"

#include "sparse-mla/Target/Hopper.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILESCHEDULEPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct SchedulePass : public sparse_mla::tile::impl::TileSchedulePassBase<SchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (failed(requireSpecialized(kernel)) || failed(setBudgets(kernel)) ||
        failed(setShares(kernel, kPartitionRowsAttr, partitionRows, "partition-rows")) ||
        failed(setShares(kernel, kPartitionColsAttr, partitionCols, "partition-cols")) ||
        failed(setStages(kernel)))
      signalPassFailure();
  }

  /// An option that found no knob to set is an error: the experiment it
  /// names would otherwise build the shipped kernel unnoticed.
  static LogicalResult unused(KernelOp kernel, StringRef option, StringRef knob) {
    return kernel.emitError("tile-schedule: ") << option << " is given, but the kernel has no "
                                               << knob;
  }

  LogicalResult setBudgets(KernelOp kernel) {
    if (registers.empty())
      return success();
    SmallVector<WarpSpecializeOp> ops;
    kernel.walk([&](WarpSpecializeOp op) { ops.push_back(op); });
    if (ops.empty())
      return unused(kernel, "registers", "tile.warp_specialize");
    for (WarpSpecializeOp op : ops) {
      if (op.getRegisters().size() != registers.size())
        return op.emitOpError("has ")
               << op.getRegisters().size() << " partitions; tile-schedule's registers gives "
               << registers.size() << " budgets";
      op.setRegisters(registers);
    }
    return success();
  }

  LogicalResult setShares(KernelOp kernel, StringRef attr, ArrayRef<int64_t> starts,
                          StringRef option) {
    if (starts.empty())
      return success();
    SmallVector<GemmOp> gemms;
    kernel.walk([&](GemmOp gemm) {
      if (gemm->hasAttr(attr))
        gemms.push_back(gemm);
    });
    if (gemms.empty())
      return unused(kernel, option, (Twine("tile.gemm with ") + attr).str());
    for (GemmOp gemm : gemms) {
      auto old = gemm->getAttrOfType<DenseI64ArrayAttr>(attr);
      if (!old || old.size() != static_cast<int64_t>(starts.size()))
        return gemm.emitOpError("is shared by ")
               << (old ? old.size() : 0) << " partitions; tile-schedule's " << option
               << " gives " << starts.size() << " shares";
      gemm->setAttr(attr, DenseI64ArrayAttr::get(gemm.getContext(), starts));
    }
    return success();
  }

  /// Each channel up to `channelStages` stages, one more at a time while
  /// the kernel's shared memory holds them, the smallest rings first (the
  /// memory buys the most stages).
  LogicalResult setStages(KernelOp kernel) {
    if (channelStages == 0)
      return success();
    if (channelStages < 0)
      return kernel.emitError("tile-schedule: channel-stages must be positive, not ")
             << static_cast<int64_t>(channelStages);
    SmallVector<ChannelOp> channels;
    kernel.walk([&](ChannelOp op) { channels.push_back(op); });
    if (channels.empty())
      return unused(kernel, "channel-stages", "tile.channel");
    auto withStages = [](ChannelOp op, int64_t stages) {
      ChannelType type = op.getType();
      return ChannelType::get(type.getContext(), type.getBuffers(), stages);
    };
    auto fits = [&] {
      SmallVector<SmemTileType> rings;
      for (ChannelOp op : channels)
        llvm::append_range(rings, op.getType().getRingTiles());
      return planSharedMemory(kernel, rings).bytes <= hopper::kSharedBytesPerCTA;
    };
    for (ChannelOp op : channels)
      op.getResult().setType(withStages(op, 1));
    llvm::stable_sort(channels, [](ChannelOp a, ChannelOp b) {
      return a.getType().getRingBytes().value_or(0) < b.getType().getRingBytes().value_or(0);
    });
    if (!fits())
      return kernel.emitError("tile-schedule: the kernel's channels do not fit the shared "
                              "memory with one stage each");
    for (int64_t stages = 2; stages <= channelStages; ++stages)
      for (ChannelOp op : channels) {
        if (op.getType().getStages() != stages - 1)
          continue; // full already
        op.getResult().setType(withStages(op, stages));
        if (!fits())
          op.getResult().setType(withStages(op, stages - 1));
      }
    return success();
  }
};

} // namespace
