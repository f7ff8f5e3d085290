//===- AllocateShared.cpp - Offsets of shared tiles -----------------------===//
//
// Every shared tile lives for the whole kernel, so offsets are a running sum.
// Each stage of a swizzled tile starts on a 1024-byte boundary (the largest
// swizzle pattern, 128 B x 8 rows, must line up with the hardware's address
// bits); the others on 16 bytes, after the swizzled ones.
// Scratch of ops that exchange values between warps comes last: for each
// such op, one region per warpgroup (warpgroup w's at offset + w * bytes).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

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
    Builder b(&getContext());
    int64_t total = 0;
    // Tiles on 1024-byte swizzle atoms first, then the rest on 16 bytes:
    // small tables between them would pad each to an atom.
    SmallVector<AllocOp> allocs;
    kernel.walk([&](AllocOp alloc) { allocs.push_back(alloc); });
    llvm::stable_sort(allocs, [](AllocOp x, AllocOp y) {
      return getSharedAlignment(cast<SmemTileType>(x.getType())) >
             getSharedAlignment(cast<SmemTileType>(y.getType()));
    });
    for (AllocOp alloc : allocs) {
      auto type = cast<SmemTileType>(alloc.getType());
      total = llvm::alignTo(total, getSharedAlignment(type));
      alloc.setOffsetAttr(b.getI64IntegerAttr(total));
      total += getSharedAllocBytes(type);
    }
    kernel.walk([&](ScratchOpInterface op) {
      if (int64_t bytes = op.getScratchBytes()) {
        op.setScratchOffset(total);
        total += llvm::alignTo(bytes * kernel.getWarpgroups(), 16);
      }
    });
    if (total > limit) {
      kernel.emitOpError("needs ")
          << total << " bytes of shared memory, more than the " << limit.getValue()
          << " a CTA may use";
      return signalPassFailure();
    }
    kernel->setAttr("tile.shared_bytes", b.getI64IntegerAttr(total));
  }
};
} // namespace
