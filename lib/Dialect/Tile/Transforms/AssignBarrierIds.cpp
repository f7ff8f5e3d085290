//===- AssignBarrierIds.cpp - Hardware ids of the named barriers ----------===//
//
// A CTA has 16 named barriers. A barrier of some warpgroups
// (`tile.barrier warpgroups([..])`) and a vote inside a warp-specialized
// partition (`tile.any`, over the warpgroups that run it) each get an id and
// a thread count (kBarrierIdAttr, kBarrierThreadsAttr), which the lowering
// turns into `bar.sync id, count`: the same set of warpgroups, the same id.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include <map>

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEASSIGNBARRIERIDSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct TileAssignBarrierIdsPass
    : public sparse_mla::tile::impl::TileAssignBarrierIdsPassBase<TileAssignBarrierIdsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Warpgroup w alone: 1 + w (as warpgroupBarrier); the whole CTA: 0;
    // every other set: the next free id, in order of first appearance. With
    // at most 4 warpgroups that is 1 + 4 + 10 ids: always enough.
    KernelOp kernel = getOperation();
    int64_t n = kernel.getWarpgroups();
    std::map<SmallVector<int64_t>, int64_t> ids;
    int64_t next = 1 + n;
    Builder b(kernel.getContext());
    auto assign = [&](Operation *op, ArrayRef<int64_t> wgs) {
      int64_t id;
      if (static_cast<int64_t>(wgs.size()) == n)
        id = 0;
      else if (wgs.size() == 1)
        id = 1 + wgs.front();
      else if (auto it = ids.find(SmallVector<int64_t>(wgs)); it != ids.end())
        id = it->second;
      else
        id = ids[SmallVector<int64_t>(wgs)] = next++;
      assert(id < hopper::kNamedBarriers && "more barriers than a CTA has");
      op->setAttr(kBarrierIdAttr, b.getI64IntegerAttr(id));
      op->setAttr(kBarrierThreadsAttr,
                  b.getI64IntegerAttr(wgs.size() * hopper::kWarpgroupThreads));
    };
    kernel.walk([&](Operation *op) {
      if (auto barrier = dyn_cast<BarrierOp>(op)) {
        if (std::optional<ArrayRef<int64_t>> wgs = barrier.getWarpgroups())
          assign(op, *wgs);
      } else if (isa<AnyOp>(op)) {
        // Over the warpgroups that run it.
        auto [first, count] = getRunningWarpgroups(op);
        assign(op, llvm::to_vector(llvm::seq(first, first + count)));
      }
    });
  }
};

} // namespace
