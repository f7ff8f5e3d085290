//===- AllocateShared.cpp - Offsets of shared tiles -----------------------===//
//
// The offsets of the kernel's shared plan (SharedMemoryPlan.h): swizzled
// tiles first, each stage on a 1024-byte boundary (the largest swizzle
// pattern, 128 B x 8 rows, must line up with the hardware's address bits),
// then the others on 16 bytes, then the scratch of ops that exchange values
// between warps: one region per warpgroup, as large as the largest op's,
// which they share (each begins with a barrier of its warpgroup).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/SharedMemoryPlan.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEALLOCATESHAREDPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {
struct TileAllocateSharedPass
    : public sparse_mla::tile::impl::TileAllocateSharedPassBase<TileAllocateSharedPass> {
  using Base::Base;
  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (failed(requireSpecialized(kernel)))
      return signalPassFailure();
    SharedMemoryPlan plan = planSharedMemory(kernel);
    if (plan.bytes > limit) {
      kernel.emitOpError("needs ")
          << plan.bytes << " bytes of shared memory, more than the " << limit.getValue()
          << " a CTA may use";
      return signalPassFailure();
    }
    Builder b(&getContext());
    for (auto [alloc, offset] : plan.tiles)
      alloc.setOffsetAttr(b.getI64IntegerAttr(offset));
    for (ScratchOpInterface op : plan.scratch)
      op.setScratchPlace(plan.scratchOffset, plan.scratchStride);
    kernel->setAttr(kSharedBytesAttr, b.getI64IntegerAttr(plan.bytes));
  }
};
} // namespace
