//===- MaterializeWaits.cpp - tile.wait as counted cp.async waits ---------===//
//
// A tile.wait names the copies it waits for by their tokens; the hardware
// counts groups: wait until at most N of the most recent groups are in
// flight. Each wait becomes the tile.async_wait that leaves in flight the
// groups started after its latest-started token, and a CTA barrier (the
// copies' data is then visible to every thread).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEMATERIALIZEWAITSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct TileMaterializeWaitsPass
    : public sparse_mla::tile::impl::TileMaterializeWaitsPassBase<TileMaterializeWaitsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](WaitOp wait) {
      int64_t pending = 0;
      bool found = wait.getTokens().empty();
      for (Operation *op = wait->getPrevNode(); op && !found; op = op->getPrevNode()) {
        if (llvm::any_of(op->getResults(), [&](Value r) {
              return llvm::is_contained(wait.getTokens(), r);
            })) {
          found = true;
          break;
        }
        if (isa<AsyncCopyOp, GatherRowsOp>(op))
          ++pending;
        else if (op->getNumRegions())
          break; // copies inside nested regions: do not count, wait for all
      }
      OpBuilder b(wait);
      AsyncWaitOp::create(b, wait.getLoc(), found ? pending : 0);
      BarrierOp::create(b, wait.getLoc());
      wait.erase();
    });
  }
};

} // namespace
