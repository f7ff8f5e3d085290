//===- CheckSharedHazards.cpp - Thread writes a GEMM reads unsynchronized -===//
//
// Threads' stores into shared memory (tile.write, tile.scatter, ...: an op
// that writes a shared tile and is not an asynchronous copy, whose token a
// tile.wait synchronizes) become visible to the tensor cores only after a
// barrier, which also fences them for wgmma's async proxy. A tile.gemm that
// reads such a tile with no barrier in between reads stale data: a silent
// wrong answer on the GPU. The pass walks each block in order with the
// shared allocations written since the last barrier (inherited by nested
// regions; what a region writes or synchronizes counts after it) and
// refuses such a GEMM. Loop-carried pairs (a write at the end of an
// iteration, the GEMM at the start of the next) are not followed.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILECHECKSHAREDHAZARDSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// The allocation a shared tile is a slice of (or the value itself).
static Value rootOf(Value v) {
  while (auto slice = v.getDefiningOp<SliceOp>())
    v = slice.getSource();
  return v;
}

/// Where a write of `op` becomes visible: after a barrier (threads' stores),
/// or by other means (copies whose token a tile.wait synchronizes, stores to
/// another CTA that an mbarrier publishes).
static bool isThreadStore(Operation *op) {
  if (llvm::any_of(op->getResultTypes(), [](Type t) { return isa<TokenType>(t); }))
    return false;
  if (auto write = dyn_cast<WriteOp>(op))
    return !write.getCta();
  return true;
}

/// What a barrier clears: every pending write (a CTA barrier, or a
/// warpgroup's, which orders the writes of the threads that reach it).
static bool isBarrier(Operation *op) { return isa<BarrierOp, WaitOp>(op); }

/// The allocations written since the last barrier, each with its latest
/// writer.
using Pending = llvm::MapVector<Value, Operation *>;

struct Checker {
  /// Walks `block` with `dirty` pending; returns failure at the first GEMM
  /// that reads one.
  LogicalResult walk(Block &block, Pending &dirty) {
    for (Operation &op : block) {
      if (isBarrier(&op)) {
        dirty.clear();
        continue;
      }
      if (auto gemm = dyn_cast<GemmOp>(op)) {
        for (Value operand : SmallVector<Value, 2>{gemm.getA(), gemm.getB()}) {
          auto writer = dirty.find(rootOf(operand));
          if (!isa<SmemTileType>(operand.getType()) || writer == dirty.end())
            continue;
          InFlightDiagnostic diag = gemm.emitOpError(
              "reads a shared tile that threads wrote with no tile.barrier since (the tensor "
              "cores may read it before the stores land)");
          diag.attachNote(writer->second->getLoc()) << "written here";
          return diag;
        }
      }
      // A region's paths: after the op, what any path left unsynchronized.
      Pending after;
      bool regions = false;
      for (Region &region : op.getRegions())
        for (Block &inner : region) {
          regions = true;
          Pending local = dirty;
          if (failed(walk(inner, local)))
            return failure();
          for (auto [alloc, writer] : local)
            after[alloc] = writer;
        }
      if (regions)
        dirty = std::move(after);
      if (!isThreadStore(&op))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects)
        continue;
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (auto &e : instances)
        if (isa<MemoryEffects::Write>(e.getEffect()))
          if (Value v = e.getValue(); v && isa<SmemTileType>(v.getType()))
            dirty[rootOf(v)] = &op;
    }
    return success();
  }
};

struct TileCheckSharedHazardsPass
    : public sparse_mla::tile::impl::TileCheckSharedHazardsPassBase<TileCheckSharedHazardsPass> {
  using Base::Base;

  void runOnOperation() override {
    Checker checker;
    for (Region &region : getOperation()->getRegions())
      for (Block &block : region) {
        Pending dirty;
        if (failed(checker.walk(block, dirty)))
          return signalPassFailure();
      }
  }
};

} // namespace
