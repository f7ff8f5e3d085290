//===- GroupGemms.cpp - GEMMs that share one wgmma group ------------------===//
//
// wgmma runs in groups: a fence before the group's first product, a commit
// and a wait after its last. GEMMs that follow one another (with only pure
// index math or slices between them) share one group, and an asynchronous
// product that another accumulates into is joined by it. The pass marks
// each GEMM that is not its group's first or last; the lowering reads the
// marks (kGroupNotFirstAttr, kGroupNotLastAttr).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEGROUPGEMMSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct TileGroupGemmsPass
    : public sparse_mla::tile::impl::TileGroupGemmsPassBase<TileGroupGemmsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](GemmOp gemm) {
      auto unit = UnitAttr::get(gemm.getContext());
      // An asynchronous product is a group of its own, which the next one
      // may join (tile.gemm); that one commits the group, and a fence before
      // it is needed only if other ops run in between.
      if (gemm.getAsync()) {
        for (Operation *user : gemm->getUsers())
          if (auto next = dyn_cast<GemmOp>(user); next && next.getJoinedGroup() == gemm) {
            gemm->setAttr(kGroupNotLastAttr, unit);
            if (gemm->getNextNode() == next)
              next->setAttr(kGroupNotFirstAttr, unit);
          }
        return;
      }
      // Only pure ops that make no register tiles (slices, index math) may
      // sit between two GEMMs of a group.
      for (Operation *next = gemm->getNextNode(); next; next = next->getNextNode()) {
        if (auto second = dyn_cast<GemmOp>(next)) {
          if (second.getAsync())
            return;
          gemm->setAttr(kGroupNotLastAttr, unit);
          second->setAttr(kGroupNotFirstAttr, unit);
          return;
        }
        bool makesTiles = llvm::any_of(next->getResultTypes(),
                                       [](Type t) { return isa<RegTileType>(t); });
        if (makesTiles || !isMemoryEffectFree(next))
          return;
      }
    });
  }
};

} // namespace
