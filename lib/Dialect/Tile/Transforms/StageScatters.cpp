//===- StageScatters.cpp - Row scatters through the TMA where room allows -===//
//
// A warpgroup that adds its rows with red.global.add issues one instruction
// per 16 bytes and keeps the load/store unit busy the whole time; staged in
// shared memory, the TMA adds whole rows while the threads go on (measured on
// the H200: 1.9x the rate at one CTA per SM, bench/probes/scatter_probe.cu).
// Each warpgroup gets one staging tile per value shape, if the kernel's
// shared plan leaves room for them (rings counted as they are).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/SharedMemoryPlan.h"

#include "llvm/ADT/MapVector.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILESTAGESCATTERSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {
struct TileStageScattersPass
    : public sparse_mla::tile::impl::TileStageScattersPassBase<TileStageScattersPass> {
  using Base::Base;
  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (failed(requireSpecialized(kernel)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    llvm::MapVector<Type, SmallVector<ScatterAddRowsOp>> byShape;
    kernel.walk([&](ScatterAddRowsOp op) {
      auto type = cast<RegTileType>(op.getValue().getType());
      if (!op.getStaging() && !op.getScale() && type.getShape()[1] % 4 == 0)
        byShape[RegTileType::get(type.getShape(), type.getElementType())].push_back(op);
    });
    if (byShape.empty())
      return;

    // One unswizzled tile per warpgroup and shape; rows padded by 16 bytes
    // so that the rows a warp writes at once fall in different banks.
    int64_t warpgroups = kernel.getWarpgroups();
    SmallVector<SmemTileType> rings;
    for (Type shape : llvm::make_first_range(byShape)) {
      auto type = cast<RegTileType>(shape);
      int64_t rows = type.getShape()[0], pitch = type.getShape()[1] * 4 + 16;
      auto layout = SharedLayoutAttr::get(ctx, 0, pitch, rows * pitch);
      rings.push_back(SmemTileType::get({warpgroups, rows, type.getShape()[1]},
                                        type.getElementType(), layout));
    }
    if (planSharedMemory(kernel, rings).bytes > limit)
      return;

    OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
    Location loc = kernel.getLoc();
    Value wg = WarpgroupIdOp::create(b, loc, b.getIndexType());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (auto [entry, ring] : llvm::zip(byShape, rings)) {
      Value all = AllocOp::create(b, loc, ring, IntegerAttr());
      auto mine = SmemTileType::get(ring.getShape().drop_front(), ring.getElementType(),
                                    ring.getLayout());
      Value own = SliceOp::create(b, loc, mine, all, ValueRange{wg, zero, zero});
      for (ScatterAddRowsOp op : entry.second)
        op.getStagingMutable().assign(own);
    }
  }
};
} // namespace
