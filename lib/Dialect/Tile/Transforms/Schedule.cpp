//===- Schedule.cpp - A kernel's schedule knobs from options --------------===//
//
// The knobs live where the passes read them: budgets on tile.warp_specialize,
// shares on the GEMMs that partitions share. (The channels' stages are
// tile-lower-channels': tile-split-partitions inserts the channels.)
// This pass overwrites them from its options, so that a build can try
// another schedule (bench/ablate.py) without touching the kernel text.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

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
        failed(setShares(kernel, kPartitionColsAttr, partitionCols, "partition-cols")))
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
};

} // namespace
