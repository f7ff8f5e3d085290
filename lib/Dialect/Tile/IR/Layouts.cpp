//===- Layouts.cpp - Where tile elements live -----------------------------===//
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace sparse_mla::tile;

unsigned sparse_mla::tile::getElementBytes(Type type) {
  return std::max<unsigned>(1, type.getIntOrFloatBitWidth() / 8);
}

static FailureOr<ThreadElements> fail(std::string *why, const Twine &msg) {
  if (why)
    *why = msg.str();
  return failure();
}

FailureOr<ThreadElements>
sparse_mla::tile::getThreadElements(Attribute layout, ArrayRef<int64_t> shape,
                                    std::string *why) {
  ThreadElements te;
  te.rank = shape.size();
  if (auto blocked = dyn_cast_if_present<BlockedLayoutAttr>(layout)) {
    if (shape.size() != 2)
      return fail(why, "#tile.blocked needs a 2-D tile");
    int64_t v = blocked.getVector(), l = blocked.getLanes();
    int64_t rowsPerPass = hopper::kWarpgroupThreads / l, colsPerPass = l * v;
    if (shape[0] % rowsPerPass || shape[1] % colsPerPass)
      return fail(why, "#tile.blocked<vector = " + Twine(v) + ", lanes = " +
                           Twine(l) + "> covers " + Twine(rowsPerPass) + "x" +
                           Twine(colsPerPass) + " blocks, which do not tile " +
                           Twine(shape[0]) + "x" + Twine(shape[1]));
    for (int64_t k = 0; k < shape[0] / rowsPerPass; ++k)
      for (int64_t m = 0; m < shape[1] / colsPerPass; ++m)
        for (int64_t e = 0; e < v; ++e)
          te.offsets.push_back({k * rowsPerPass, m * colsPerPass + e});
    te.vector = v;
    return te;
  }
  if (isa_and_present<MmaLayoutAttr>(layout)) {
    if (shape.size() != 2 || shape[0] % hopper::kWgmmaM || shape[1] % hopper::kWgmmaNStep)
      return fail(why, "#tile.mma needs a 2-D tile of 64k rows and 8n columns");
    for (int64_t mb = 0; mb < shape[0] / hopper::kWgmmaM; ++mb)
      for (int64_t i = 0; i < shape[1] / hopper::kWgmmaNStep; ++i)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t e = 0; e < 2; ++e)
            te.offsets.push_back(
                {hopper::kWgmmaM * mb + 8 * h, hopper::kWgmmaNStep * i + e});
    te.vector = 2;
    return te;
  }
  if (auto slice = dyn_cast_if_present<SliceLayoutAttr>(layout)) {
    if (shape.size() != 1)
      return fail(why, "#tile.slice needs a 1-D tile");
    // Enumerate the parent over a shape that is long enough in the removed
    // dimension and keep the distinct coordinates of the other one.
    unsigned keep = 1 - slice.getDim();
    SmallVector<int64_t, 2> parentShape(2);
    parentShape[keep] = shape[0];
    parentShape[slice.getDim()] = 256;
    FailureOr<ThreadElements> parent =
        getThreadElements(slice.getParent(), parentShape, why);
    if (failed(parent))
      return failure();
    for (auto &off : parent->offsets)
      if (llvm::none_of(te.offsets, [&](auto &o) { return o[0] == off[keep]; }))
        te.offsets.push_back({off[keep], 0});
    te.vector = keep == 1 ? parent->vector : 1;
    return te;
  }
  return fail(why, "register tile has no layout");
}

SmallVector<BaseTerm, 2> sparse_mla::tile::getBaseTerms(Attribute layout,
                                                        unsigned rank) {
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(layout)) {
    int64_t l = blocked.getLanes();
    return {BaseTerm{l, 0, 1, 0}, BaseTerm{1, l, blocked.getVector(), 0}};
  }
  if (isa<MmaLayoutAttr>(layout))
    return {BaseTerm{4, 8, 1, 16}, BaseTerm{1, 4, 2, 0}};
  auto slice = cast<SliceLayoutAttr>(layout);
  return {getBaseTerms(slice.getParent(), 2)[1 - slice.getDim()]};
}

BaseTerm sparse_mla::tile::getReplicaTerm(SliceLayoutAttr slice) {
  // Zero exactly on the threads whose coordinate along the removed dimension
  // is the smallest.
  return getBaseTerms(slice.getParent(), 2)[slice.getDim()];
}

FailureOr<Reduction> sparse_mla::tile::getReduction(Attribute layout, unsigned dim) {
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(layout)) {
    // A row across every thread: each thread holds whole columns.
    if (dim == 0 && blocked.getLanes() == hopper::kWarpgroupThreads)
      return Reduction{};
    if (dim != 1 || blocked.getLanes() > hopper::kWarpThreads)
      return failure();
    Reduction r;
    for (unsigned m = 1; m < blocked.getLanes(); m <<= 1)
      r.laneMasks.push_back(m);
    return r;
  }
  if (!isa<MmaLayoutAttr>(layout))
    return failure();
  // A row: the 4 lanes of a quad. A column: the 8 quads of each warp, and
  // the warpgroup's 4 warps (16 rows each).
  if (dim == 1)
    return Reduction{{1, 2}, 1};
  return Reduction{{4, 8, 16}, hopper::kWarpgroupWarps};
}

BlockedLayoutAttr sparse_mla::tile::getCoalescedLayout(MLIRContext *ctx,
                                                       ArrayRef<int64_t> shape,
                                                       unsigned elementBytes,
                                                       int64_t maxLanes) {
  if (shape.size() != 2)
    return {};
  // The widest accesses that fit, then the most lanes per row.
  for (int64_t v = std::max<int64_t>(1, hopper::kAccessBytes / elementBytes); v >= 1;
       v /= 2)
    for (int64_t l = maxLanes; l >= 1; l /= 2)
      if (shape[1] % (l * v) == 0 && shape[0] % (hopper::kWarpgroupThreads / l) == 0)
        return BlockedLayoutAttr::get(ctx, v, l);
  return {};
}

int64_t sparse_mla::tile::getSharedLinearOffset(SharedLayoutAttr layout,
                                                unsigned elementBytes,
                                                int64_t row, int64_t col) {
  ConstantArith a;
  return sharedByteOffset(a, layout, elementBytes, row, col, /*swizzled=*/false);
}

SharedLayoutAttr
sparse_mla::tile::getDefaultSharedLayout(MLIRContext *ctx,
                                         ArrayRef<int64_t> shape,
                                         unsigned elementBytes,
                                         int64_t maxSwizzle) {
  int64_t rows = shape[shape.size() - 2];
  int64_t rowBytes = shape.back() * elementBytes;
  for (unsigned s : {128u, 64u, 32u})
    if (s <= maxSwizzle && rowBytes % s == 0 && rows % 8 == 0)
      return SharedLayoutAttr::get(ctx, s, s, rows * s);
  return SharedLayoutAttr::get(ctx, 0, rowBytes, rows * rowBytes);
}

int64_t sparse_mla::tile::getSharedTileBytes(SmemTileType type) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape[shape.size() - 2];
  int64_t rowBytes = shape.back() * getElementBytes(type.getElementType());
  int64_t bytes = rows * rowBytes;
  // A layout may pad the rows or space its column blocks apart.
  if (SharedLayoutAttr l = type.getSharedLayout()) {
    int64_t width = l.getSwizzle() ? l.getSwizzle() : l.getPitch();
    int64_t blocks = llvm::divideCeil(rowBytes, width);
    bytes = std::max(bytes, (blocks - 1) * l.getBlockStride() + rows * l.getPitch());
  }
  return llvm::alignTo(bytes, getSharedAlignment(type));
}

int64_t sparse_mla::tile::getSharedAlignment(SmemTileType type) {
  SharedLayoutAttr l = type.getSharedLayout();
  return l && l.getSwizzle() ? hopper::kSwizzleAtomBytes : hopper::kAccessBytes;
}

int64_t sparse_mla::tile::getSharedAllocBytes(SmemTileType type) {
  return (type.getRank() == 3 ? type.getShape()[0] : 1) * getSharedTileBytes(type);
}
