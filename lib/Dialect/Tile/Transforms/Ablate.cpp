//===- Ablate.cpp - Take parts of a kernel's work out, for timing ---------===//
//
// What a part of the work costs inside the whole kernel is the time it saves
// when taken out with everything else left in place (bench/ablate.py). An
// idle gather or scatter keeps all its instructions but moves no byte: its
// row indices become -1 behind a run-time test the compiler cannot fold.
// A dropped scatter is erased with the products only it used.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEABLATEPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Never true at run time (no grid has 12345 CTAs along z), which the
/// compiler cannot know.
constexpr int64_t kNeverGridZ = 12345;

struct AblatePass : public sparse_mla::tile::impl::TileAblatePassBase<AblatePass> {
  using Base::Base;

  void runOnOperation() override {
    KernelOp kernel = getOperation();
    auto inPartitions = [](Operation *op, ArrayRef<int64_t> partitions) {
      auto partition = getPartition(op);
      return partition && llvm::is_contained(partitions, partition->second);
    };
    SmallVector<Operation *> idle, dropped;
    kernel.walk([&](Operation *op) {
      if (isa<GatherRowsOp>(op) && idleGathers && getPartition(op))
        idle.push_back(op);
      if (isa<ScatterAddRowsOp>(op) && inPartitions(op, idleScatters))
        idle.push_back(op);
      if (isa<ScatterAddRowsOp>(op) && inPartitions(op, dropScatters))
        dropped.push_back(op);
    });
    if (idle.empty() && dropped.empty()) {
      if (idleGathers || !idleScatters.empty() || !dropScatters.empty()) {
        kernel.emitError("tile-ablate: no gather or scatter of a partition matches its options");
        return signalPassFailure();
      }
      return;
    }
    // One idle copy of each row index tile, so that scatters that shared
    // rows still share them (tile-split-d joins those into one scatter).
    DenseMap<Value, Value> idled;
    for (Operation *op : idle) {
      OpOperand &rows = isa<GatherRowsOp>(op) ? cast<GatherRowsOp>(op).getRowsMutable()
                                              : cast<ScatterAddRowsOp>(op).getRowsMutable();
      Value &off = idled[rows.get()];
      if (!off)
        off = idleRows(rows.get());
      rows.set(off);
    }
    for (Operation *op : dropped)
      op->erase();
    // The products only the dropped scatters used (users first).
    kernel.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
      if (isOpTriviallyDead(op))
        op->erase();
    });
  }

  /// `rows` with every index -1 at run time, right after it is defined.
  static Value idleRows(Value rows) {
    OpBuilder b(rows.getContext());
    b.setInsertionPointAfterValue(rows);
    Location loc = rows.getLoc();
    Value z = GridDimOp::create(b, loc, b.getIndexType(), Dim::z);
    Value never = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, z,
                                        arith::ConstantIndexOp::create(b, loc, kNeverGridZ));
    return keepRowsIf(b, loc, rows, never);
  }
};

} // namespace
