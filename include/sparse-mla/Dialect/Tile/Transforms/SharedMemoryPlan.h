//===- SharedMemoryPlan.h - Where a kernel's shared tiles go ----*- C++ -*-===//
//
// The one account of a CTA's shared memory. tile-allocate-shared places the
// tiles by it; the passes that add or grow tiles before it (the rings of
// tile-pipeline-loops, the staging tiles of tile-stage-scatters) ask it what
// the kernel would need with them, against the target's limit (Hopper.h).
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_DIALECT_TILE_TRANSFORMS_SHAREDMEMORYPLAN_H
#define SPARSE_MLA_DIALECT_TILE_TRANSFORMS_SHAREDMEMORYPLAN_H

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace sparse_mla::tile {

struct SharedMemoryPlan {
  /// The offset of each tile.alloc of the kernel.
  llvm::SmallVector<std::pair<AllocOp, int64_t>> tiles;
  /// The ops that exchange values through scratch: they share one region
  /// per warpgroup, at scratchOffset + w * scratchStride.
  llvm::SmallVector<ScratchOpInterface> scratch;
  int64_t scratchOffset = 0, scratchStride = 0;
  /// Bytes of shared memory the kernel needs.
  int64_t bytes = 0;
};

/// Plans `kernel`'s shared memory: every tile.alloc, with the type `typeOf`
/// gives it (default: its own), and the `extra` tiles a pass considers
/// adding (counted, not placed). A tile without a layout counts with the one
/// tile-assign-layouts will give it. Swizzled tiles come first, each stage
/// on a swizzle atom, then the others on 16 bytes (small tables between
/// swizzled tiles would pad each to an atom); then the scratch of ops that
/// exchange values between warps, which is known once layouts are assigned.
SharedMemoryPlan planSharedMemory(KernelOp kernel, llvm::ArrayRef<SmemTileType> extra = {},
                                  llvm::function_ref<SmemTileType(AllocOp)> typeOf = nullptr);

} // namespace sparse_mla::tile

#endif
