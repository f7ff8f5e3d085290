//===- Layouts.h - Where tile elements live ---------------------*- C++ -*-===//
//
// The thread/element geometry of the register layouts and the byte geometry
// of the shared layouts. Verifiers, the layout pass and the lowering all ask
// these functions, so the three agree by construction.
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_DIALECT_TILE_IR_LAYOUTS_H
#define SPARSE_MLA_DIALECT_TILE_IR_LAYOUTS_H

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "llvm/ADT/SmallVector.h"
#include <array>

namespace sparse_mla::tile {

/// The elements one thread holds. Element `i` has coordinates
/// `base(thread) + offsets[i]` (one coordinate per tile dimension, stored in
/// the leading entries). Consecutive elements whose last coordinate grows by
/// one form runs of `vector` elements.
struct ThreadElements {
  unsigned rank = 0;
  llvm::SmallVector<std::array<int64_t, 2>> offsets;
  unsigned vector = 1;
};

/// Formula for a thread's base coordinate along one tile dimension:
/// `((tid / divisor) % modulus) * scale + warpScale * (tid / 32)`.
/// A modulus of 0 means no modulus.
struct BaseTerm {
  int64_t divisor = 1, modulus = 0, scale = 0, warpScale = 0;
};

/// Describes how `layout` spreads a tile of `shape` over the 128 threads of a
/// warpgroup, or fails with a message if the shape does not fit the layout.
llvm::FailureOr<ThreadElements>
getThreadElements(mlir::Attribute layout, llvm::ArrayRef<int64_t> shape,
                  std::string *why = nullptr);

/// The base formula of each tile dimension (rank terms).
llvm::SmallVector<BaseTerm, 2> getBaseTerms(mlir::Attribute layout,
                                            unsigned rank);

/// For a 1-D sliced layout: the formula whose value is zero on exactly one of
/// the threads holding each element (the thread that stores it).
BaseTerm getReplicaTerm(SliceLayoutAttr slice);

/// How a 2-D tile reduces along a dimension: in the thread, then a
/// butterfly over `laneMasks` in the warp, then, where the dimension spans
/// `warps` > 1 warps of the warpgroup (a #tile.mma tile's rows), across
/// them through shared scratch.
struct Reduction {
  llvm::SmallVector<unsigned> laneMasks;
  int64_t warps = 1;
};

/// The reduction of a tile in `layout` along `dim`, or failure where the
/// lowering has none (a blocked layout whose rows or columns span warps
/// partially).
llvm::FailureOr<Reduction> getReduction(mlir::Attribute layout, unsigned dim);

/// The blocked layout for the widest accesses (up to 16 bytes) to a 2-D
/// tile of `shape` with `elementBytes`-byte elements, at most `maxLanes`
/// threads per row, or null if none fits.
BlockedLayoutAttr getCoalescedLayout(mlir::MLIRContext *ctx,
                                     llvm::ArrayRef<int64_t> shape,
                                     unsigned elementBytes,
                                     int64_t maxLanes = hopper::kWarpThreads);

/// Threads per row of a gather: 8 threads read a 128-byte line of a row,
/// so each thread holds as few row indices (and row pointers) as it can
/// while every access is still a whole line.
constexpr int64_t kGatherLanes = 8;

/// Byte offset of element (row, col) in a shared tile of `layout`: blocks of
/// `swizzle` bytes per row (the whole row unswizzled), `block_stride` apart;
/// with `swizzled`, the 16-byte chunk bits XOR the 128-byte line bits, as
/// the hardware does (the tile must start at a multiple of `8 * swizzle`
/// bytes); without, the offset a wgmma descriptor starts at. The one formula,
/// in any arithmetic `A`: `A::Value` numbers, `c(int64_t)` constants and
/// mul, div, rem, add, shr, andi, shl, xori on them (int64_t here, IR ops
/// in the lowering).
template <typename A>
typename A::Value sharedByteOffset(A &a, SharedLayoutAttr layout, unsigned elementBytes,
                                   typename A::Value row, typename A::Value col,
                                   bool swizzled = true) {
  // One operation per statement: the IR comes out in a fixed order.
  int64_t width = layout.getSwizzle() ? layout.getSwizzle() : layout.getPitch();
  auto x = a.mul(col, a.c(elementBytes));
  auto block = a.div(x, a.c(width));
  auto inBlock = a.rem(x, a.c(width));
  auto off = a.mul(block, a.c(layout.getBlockStride()));
  auto rowOff = a.mul(row, a.c(layout.getPitch()));
  off = a.add(off, rowOff);
  off = a.add(off, inBlock);
  if (unsigned s = layout.getSwizzle(); s && swizzled) {
    auto line = a.shr(off, a.c(7));
    auto phase = a.andi(line, a.c(s / 16 - 1));
    auto chunks = a.shl(phase, a.c(4));
    off = a.xori(off, chunks);
  }
  return off;
}

/// Compile-time arithmetic for sharedByteOffset.
struct ConstantArith {
  using Value = int64_t;
  int64_t c(int64_t v) { return v; }
  int64_t mul(int64_t x, int64_t y) { return x * y; }
  int64_t div(int64_t x, int64_t y) { return x / y; }
  int64_t rem(int64_t x, int64_t y) { return x % y; }
  int64_t add(int64_t x, int64_t y) { return x + y; }
  int64_t shr(int64_t x, int64_t y) { return x >> y; }
  int64_t andi(int64_t x, int64_t y) { return x & y; }
  int64_t shl(int64_t x, int64_t y) { return x << y; }
  int64_t xori(int64_t x, int64_t y) { return x ^ y; }
};

/// sharedByteOffset before the swizzle, at compile time.
int64_t getSharedLinearOffset(SharedLayoutAttr layout, unsigned elementBytes,
                              int64_t row, int64_t col);

/// The shared layout the layout pass gives a fresh allocation: the widest
/// swizzle (128, 64 or 32 bytes, at most `maxSwizzle`) that divides the row,
/// blocks of 8-row atoms; unswizzled where none does.
SharedLayoutAttr getDefaultSharedLayout(mlir::MLIRContext *ctx,
                                        llvm::ArrayRef<int64_t> shape,
                                        unsigned elementBytes,
                                        int64_t maxSwizzle = 128);

/// Bytes one stage of a shared tile occupies (rounded up to its alignment).
int64_t getSharedTileBytes(SmemTileType type);
/// Where a shared tile may start: on a swizzle atom when swizzled (the
/// pattern follows the address), else on a 16-byte vector.
int64_t getSharedAlignment(SmemTileType type);
/// Bytes a shared allocation of `type` takes: each stage of a 3-D ring.
int64_t getSharedAllocBytes(SmemTileType type);

unsigned getElementBytes(mlir::Type type);

/// The interleaved column order (`tile.scatter_add_rows {interleaved}`):
/// in each group of 16 columns, column `8 * h + 2 * q + e` is stored at
/// `4 * q + 2 * h + e`, the order in which a thread of an `#tile.mma` tile
/// holds its pairs of a row (pairs q of both 8-column halves).
constexpr int64_t kInterleaveColumns = 16;
constexpr int64_t getInterleavedColumn(int64_t col) {
  return (col & ~int64_t(15)) | ((col & 6) << 1) | ((col >> 2) & 2) | (col & 1);
}

} // namespace sparse_mla::tile

#endif
