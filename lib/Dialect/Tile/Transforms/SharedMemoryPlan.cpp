//===- SharedMemoryPlan.cpp - Where a kernel's shared tiles go ------------===//
//
// Every shared tile lives for the whole kernel, so offsets are a running sum
// in placement order.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/SharedMemoryPlan.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"

using namespace mlir;
using namespace sparse_mla::tile;

/// `type` with the layout it has or will get.
static SmemTileType withLayout(SmemTileType type) {
  if (type.getLayout())
    return type;
  return SmemTileType::get(type.getShape(), type.getElementType(),
                           getDefaultSharedLayout(type.getContext(), type.getShape(),
                                                  getElementBytes(type.getElementType())));
}

SharedMemoryPlan sparse_mla::tile::planSharedMemory(
    KernelOp kernel, ArrayRef<SmemTileType> extra,
    function_ref<SmemTileType(AllocOp)> typeOf) {
  struct Tile {
    AllocOp alloc; // null for an extra tile
    SmemTileType type;
  };
  SmallVector<Tile> tiles;
  kernel.walk([&](AllocOp alloc) {
    tiles.push_back({alloc, withLayout(typeOf ? typeOf(alloc)
                                              : cast<SmemTileType>(alloc.getType()))});
  });
  for (SmemTileType type : extra)
    tiles.push_back({AllocOp(), withLayout(type)});
  llvm::stable_sort(tiles, [](const Tile &x, const Tile &y) {
    return getSharedAlignment(x.type) > getSharedAlignment(y.type);
  });
  SharedMemoryPlan plan;
  for (const Tile &tile : tiles) {
    plan.bytes = llvm::alignTo(plan.bytes, getSharedAlignment(tile.type));
    if (tile.alloc)
      plan.tiles.push_back({tile.alloc, plan.bytes});
    plan.bytes += getSharedAllocBytes(tile.type);
  }
  // One scratch region per warpgroup, as large as the largest op's: every
  // op that exchanges values through it starts with a barrier of its
  // warpgroup, so it writes only once the warpgroup has read what the op
  // before it wrote.
  kernel.walk([&](ScratchOpInterface op) {
    if (int64_t bytes = op.getScratchBytes()) {
      plan.scratch.push_back(op);
      plan.scratchStride = std::max(plan.scratchStride, bytes);
    }
  });
  plan.scratchOffset = plan.bytes;
  plan.bytes += llvm::alignTo(plan.scratchStride * kernel.getWarpgroups(), hopper::kAccessBytes);
  return plan;
}
