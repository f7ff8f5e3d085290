//===- TileOps.cpp - Ops of the tile dialect: verifiers, syntax, folds ------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace sparse_mla::tile;

#define GET_OP_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Register tile ops
//===----------------------------------------------------------------------===//

LogicalResult sparse_mla::tile::OpTrait::verifySameLayoutTiles(Operation *op) {
  Attribute seen;
  auto check = [&](Type t) {
    auto tile = dyn_cast<RegTileType>(t);
    if (!tile || !tile.getLayout())
      return true;
    if (!seen)
      seen = tile.getLayout();
    return seen == tile.getLayout();
  };
  for (Type t : op->getOperandTypes())
    if (!check(t))
      return op->emitOpError("register tiles must share one layout");
  for (Type t : op->getResultTypes())
    if (!check(t))
      return op->emitOpError("register tiles must share one layout");
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = cast<RegTileType>(getResult().getType());
  if (getDim() >= static_cast<uint64_t>(type.getRank()))
    return emitOpError("dimension ") << getDim() << " of a rank-" << type.getRank() << " tile";
  if (!type.getElementType().isSignlessInteger(32))
    return emitOpError("coordinates are i32");
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  auto from = cast<RegTileType>(getSource().getType());
  auto to = cast<RegTileType>(getType());
  if (from.getShape() != to.getShape() || from.getElementType() != to.getElementType())
    return emitOpError("converts a tile to another layout of its shape and element type, not ")
           << from << " to " << to;
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  return {};
}

int64_t ConvertLayoutOp::getScratchBytes() {
  auto from = cast<RegTileType>(getSource().getType());
  auto to = cast<RegTileType>(getType());
  if (!from.getLayout() || !to.getLayout() || from.getLayout() == to.getLayout())
    return 0;
  int64_t elements = 1;
  for (int64_t d : from.getShape())
    elements *= d;
  return llvm::alignTo(elements * getElementBytes(from.getElementType()),
                       hopper::kAccessBytes);
}

LogicalResult ScanOp::verify() {
  auto type = cast<RegTileType>(getSource().getType());
  if (type.getRank() != 2)
    return emitOpError("scans the rows of a 2-D tile");
  Type elt = type.getElementType();
  if (!elt.isSignlessInteger(32) && !elt.isF32())
    return emitOpError("scans i32 or f32 tiles");
  if (type.getLayout() && !isa<BlockedLayoutAttr>(type.getLayout()))
    return emitOpError("needs a #tile.blocked layout");
  return success();
}

int64_t ScanOp::getScratchBytes() {
  auto type = cast<RegTileType>(getSource().getType());
  auto blocked = dyn_cast_if_present<BlockedLayoutAttr>(type.getLayout());
  if (!blocked || blocked.getLanes() <= hopper::kWarpThreads)
    return 0;
  // One total per run of a thread and per warp of its row.
  FailureOr<ThreadElements> te = getThreadElements(blocked, type.getShape());
  if (failed(te))
    return 0;
  int64_t runs = te->offsets.size() / te->vector;
  return runs * hopper::kWarpgroupWarps * 4;
}

int64_t ReduceOp::getScratchBytes() {
  auto type = cast<RegTileType>(getSource().getType());
  FailureOr<Reduction> reduction = type.getLayout() ? getReduction(type.getLayout(), getDim())
                                                    : FailureOr<Reduction>(failure());
  if (failed(reduction) || reduction->warps == 1)
    return 0;
  // Each warp's partial of every result element.
  int64_t kept = type.getShape()[1 - getDim()];
  if (ShapedType::isDynamic(kept))
    return 0;
  return reduction->warps * kept * getElementBytes(type.getElementType());
}

Value sparse_mla::tile::keepRowsIf(OpBuilder &b, Location loc, Value rows, Value keep) {
  auto type = cast<RegTileType>(rows.getType());
  OpBuilder::InsertionGuard guard(b);
  auto map = MapOp::create(b, loc, type, ValueRange{rows});
  Block *body = b.createBlock(&map.getBody(), {}, {type.getElementType()}, {loc});
  Value none = arith::ConstantIntOp::create(b, loc, -1, 32);
  Value row = arith::SelectOp::create(b, loc, keep, body->getArgument(0), none);
  YieldOp::create(b, loc, ValueRange{row});
  return map.getResult();
}

LogicalResult MapOp::verify() {
  auto resultType = cast<RegTileType>(getResult().getType());
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RegTileType>(input.getType());
    if (!sameShape(type, resultType))
      return emitOpError("input #") << i << " has shape other than the result";
    if (type.getLayout() != resultType.getLayout())
      return emitOpError("input #") << i << " has a layout other than the result";
    if (body.getArgument(i).getType() != type.getElementType())
      return emitOpError("body argument #")
             << i << " must have the element type of input #" << i;
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != resultType.getElementType())
    return emitOpError("body must yield one value of the result element type");
  for (Operation &op : body.without_terminator()) {
    // (No arith or math op has regions.)
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return op.emitOpError("is not allowed in a tile.map body (arith and math only)");
  }
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto src = cast<RegTileType>(getSource().getType());
  auto res = cast<RegTileType>(getResult().getType());
  if (src.getRank() != 1 || res.getRank() != 2)
    return emitOpError("broadcasts a 1-D tile to a 2-D tile");
  if (src.getElementType() != res.getElementType())
    return emitOpError("source and result element types differ");
  TileDim kept = getTileDim(res, 1 - getDim());
  if (getTileDim(src, 0) != kept)
    return emitOpError("source of ")
           << getTileDim(src, 0).str() << " elements does not match the "
           << kept.str() << " of result dimension " << (1 - getDim());
  if (src.getLayout() && res.getLayout() &&
      src.getLayout() !=
          SliceLayoutAttr::get(getContext(), getDim(), res.getLayout()))
    return emitOpError("source layout must be the slice of the result layout "
                       "along the broadcast dimension");
  return success();
}

LogicalResult ReduceOp::verify() {
  auto src = cast<RegTileType>(getSource().getType());
  auto res = cast<RegTileType>(getResult().getType());
  if (src.getRank() != 2 || res.getRank() != 1)
    return emitOpError("reduces a 2-D tile to a 1-D tile");
  if (src.getElementType() != res.getElementType())
    return emitOpError("source and result element types differ");
  if (!isa<FloatType>(src.getElementType()))
    return emitOpError("reduces float tiles");
  TileDim kept = getTileDim(src, 1 - getDim());
  if (getTileDim(res, 0) != kept)
    return emitOpError("result of ")
           << getTileDim(res, 0).str() << " elements does not match the "
           << kept.str() << " of source dimension " << (1 - getDim());
  if (src.getLayout() && res.getLayout() &&
      res.getLayout() !=
          SliceLayoutAttr::get(getContext(), getDim(), src.getLayout()))
    return emitOpError("result layout must be the slice of the source layout "
                       "along the reduced dimension");
  return success();
}

//===----------------------------------------------------------------------===//
// Global memory ops
//===----------------------------------------------------------------------===//

/// Checks a window access of `tile` into `memref` at `indices` with `bounds`.
static LogicalResult verifyWindow(Operation *op, MemRefType memref,
                                  RegTileType tile, size_t numIndices,
                                  size_t numBounds) {
  if (numIndices != static_cast<size_t>(memref.getRank()))
    return op->emitOpError("needs ")
           << memref.getRank() << " indices for a rank-" << memref.getRank()
           << " memref, got " << numIndices;
  if (tile.getRank() > memref.getRank())
    return op->emitOpError("tile rank exceeds the memref rank");
  if (numBounds && numBounds != static_cast<size_t>(tile.getRank()))
    return op->emitOpError("needs one bound per tile dimension (")
           << tile.getRank() << "), got " << numBounds;
  if (tile.getElementType() != memref.getElementType())
    return op->emitOpError("tile and memref element types differ");
  return success();
}

/// An interleaved matrix is read or written in whole 16-column groups.
static LogicalResult verifyInterleaved(Operation *op, RegTileType tile) {
  if (tile.getRank() != 2)
    return op->emitOpError("interleaves the columns of 2-D tiles only");
  if (TileDim n = getTileDim(tile, 1); n.isStatic() && n.size % kInterleaveColumns)
    return op->emitOpError("interleaved columns come in groups of ")
           << kInterleaveColumns << ": the tile has " << n.size;
  return success();
}

LogicalResult LoadOp::verify() {
  auto tile = cast<RegTileType>(getResult().getType());
  if (failed(verifyWindow(*this, cast<MemRefType>(getSource().getType()), tile,
                          getIndices().size(), getBounds().size())))
    return failure();
  if (getPad() && getPad().getType() != tile.getElementType())
    return emitOpError("pad value must have the tile element type");
  if (!getBounds().empty() && !getPad())
    return emitOpError("bounded loads need a pad value");
  if (getBounds().empty() && getPad())
    return emitOpError("a pad value needs bounds");
  if (getInterleaved() && failed(verifyInterleaved(*this, tile)))
    return failure();
  return success();
}

LogicalResult StoreOp::verify() {
  auto tile = cast<RegTileType>(getValue().getType());
  if (getTranspose() && tile.getRank() != 2)
    return emitOpError("transposes only 2-D tiles");
  return verifyWindow(*this, cast<MemRefType>(getDest().getType()), tile,
                      getIndices().size(), getBounds().size());
}

static LogicalResult verifyRowIndices(Operation *op, RegTileType rows,
                                      TileDim numRows) {
  if (rows.getRank() != 1 || !rows.getElementType().isInteger(32))
    return op->emitOpError("row indices must be a 1-D tile of i32");
  if (getTileDim(rows, 0) != numRows)
    return op->emitOpError("has ")
           << getTileDim(rows, 0).str() << " row indices for " << numRows.str()
           << " rows";
  return success();
}

LogicalResult StoreRowsOp::verify() {
  auto value = cast<RegTileType>(getValue().getType());
  auto dest = cast<MemRefType>(getDest().getType());
  if (value.getRank() != 2 || dest.getRank() != 2)
    return emitOpError("stores a 2-D tile into a 2-D memref");
  if (value.getElementType() != dest.getElementType())
    return emitOpError("tile and memref element types differ");
  unsigned rowDim = getTranspose() ? 1 : 0;
  auto rows = cast<RegTileType>(getRows().getType());
  if (failed(verifyRowIndices(*this, rows, getTileDim(value, rowDim))))
    return failure();
  // Each thread writes the rows it holds, so it must hold their indices.
  if (value.getLayout() && rows.getLayout() &&
      rows.getLayout() != SliceLayoutAttr::get(getContext(), 1 - rowDim, value.getLayout()))
    return emitOpError("row indices must have layout ")
           << SliceLayoutAttr::get(getContext(), 1 - rowDim, value.getLayout());
  return success();
}

/// Checks an access by positions: i32 positions of the value's shape, and
/// a memref or 2-D shared tile of the value's element type.
static LogicalResult verifyPositions(Operation *op, Type memory, RegTileType value,
                                     RegTileType positions) {
  if (!positions.getElementType().isSignlessInteger(32))
    return op->emitOpError("positions are i32");
  if (!sameShape(positions, value))
    return op->emitOpError("positions and values differ in shape");
  auto elt = cast<ShapedType>(memory).getElementType();
  if (elt != value.getElementType())
    return op->emitOpError("element types differ: ")
           << elt << " in memory, " << value.getElementType() << " in the tile";
  if (auto smem = dyn_cast<SmemTileType>(memory); smem && smem.getRank() != 2)
    return op->emitOpError("accesses a 2-D shared tile, not a ring");
  // A position is a linear index: a strided view has holes between rows.
  if (auto memref = dyn_cast<MemRefType>(memory); memref && !memref.getLayout().isIdentity())
    return op->emitOpError("positions index memrefs with the identity layout");
  return success();
}

LogicalResult GatherOp::verify() {
  auto result = cast<RegTileType>(getResult().getType());
  if (getPad() && getPad().getType() != result.getElementType())
    return emitOpError("pad value must have the tile element type");
  return verifyPositions(*this, getSource().getType(), result,
                         cast<RegTileType>(getPositions().getType()));
}

LogicalResult ScatterOp::verify() {
  return verifyPositions(*this, getDest().getType(),
                         cast<RegTileType>(getValue().getType()),
                         cast<RegTileType>(getPositions().getType()));
}

LogicalResult AtomicRMWOp::verify() {
  auto value = cast<RegTileType>(getValue().getType());
  if (failed(verifyPositions(*this, getDest().getType(), value,
                             cast<RegTileType>(getPositions().getType()))))
    return failure();
  Type elt = value.getElementType();
  bool ok = elt.isSignlessInteger(32) || (elt.isF32() && getKind() == AtomicKind::add);
  if (!ok)
    return emitOpError("'") << stringifyAtomicKind(getKind()) << "' is not supported on " << elt;
  return success();
}

bool SplatOp::isPositiveZero() {
  auto cst = getValue().getDefiningOp<arith::ConstantOp>();
  auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  return f && f.getValue().isPosZero();
}

LogicalResult ScatterAddRowsOp::verify() {
  auto value = cast<RegTileType>(getValue().getType());
  auto dest = cast<MemRefType>(getDest().getType());
  if (value.getRank() != 2 || !value.getElementType().isF32())
    return emitOpError("adds a 2-D f32 tile");
  if (getScale()) {
    if (dest.getRank() != 2 || !dest.getElementType().isInteger(64))
      return emitOpError("destination of a fixed-point (scaled) addition must be a 2-D "
                         "i64 memref");
    if (getStaging() || getInterleaved())
      return emitOpError("fixed-point additions are neither staged nor interleaved");
    if (Value overflow = getOverflow()) {
      auto flags = cast<MemRefType>(overflow.getType());
      if (flags.getRank() != 1 || !flags.getElementType().isInteger(32))
        return emitOpError("overflow must be a 1-D i32 memref (a flag per destination row)");
    }
  } else if (getOverflow()) {
    return emitOpError("overflow flags rows of a fixed-point (scaled) addition: it needs a scale");
  } else if (dest.getRank() != 2 || !dest.getElementType().isF32()) {
    return emitOpError("destination must be a 2-D f32 memref, or i64 with a scale");
  }
  auto rows = cast<RegTileType>(getRows().getType());
  if (failed(verifyRowIndices(*this, rows, getTileDim(value, 0))))
    return failure();
  if (Value staging = getStaging()) {
    auto type = cast<SmemTileType>(staging.getType());
    if (type.getRank() != 2 || !type.getElementType().isF32() ||
        !sameShape(type, value))
      return emitOpError("staging must be a 2-D f32 shared tile of the value's shape");
    if (auto layout = type.getSharedLayout(); layout && layout.getSwizzle())
      return emitOpError("staging rows are read whole by the bulk reduction: "
                         "the tile must not be swizzled");
    if (TileDim n = getTileDim(value, 1); n.isStatic() && n.size % 4)
      return emitOpError("staged rows of ") << n.size << " f32 are not whole 16-byte chunks";
  }
  if (getInterleaved() && failed(verifyInterleaved(*this, value)))
    return failure();
  // Each thread adds the rows it holds, so it must hold their indices.
  if (value.getLayout() && rows.getLayout() &&
      rows.getLayout() != SliceLayoutAttr::get(getContext(), 1, value.getLayout()))
    return emitOpError("row indices must have layout ")
           << SliceLayoutAttr::get(getContext(), 1, value.getLayout())
           << ", the rows of the value's";
  return success();
}

//===----------------------------------------------------------------------===//
// Shared memory ops
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  int64_t align = getSharedAlignment(cast<SmemTileType>(getType()));
  if (IntegerAttr offset = getOffsetAttr(); offset && (offset.getInt() < 0 || offset.getInt() % align))
    return emitOpError("offset must be a non-negative multiple of ")
           << align << " bytes";
  return success();
}

int64_t sparse_mla::tile::knownMultiple(Value v) {
  constexpr int64_t kAny = int64_t(1) << 30;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c ? std::min<int64_t>(std::abs(*c), kAny) : kAny;
  Operation *def = v.getDefiningOp();
  if (!def)
    return 1;
  if (isa<arith::MulIOp>(def))
    return std::min(knownMultiple(def->getOperand(0)) * knownMultiple(def->getOperand(1)), kAny);
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::gcd(knownMultiple(def->getOperand(0)), knownMultiple(def->getOperand(1)));
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp>(def))
    return knownMultiple(def->getOperand(0));
  return 1;
}

LogicalResult SliceOp::verify() {
  auto src = cast<SmemTileType>(getSource().getType());
  auto res = cast<SmemTileType>(getResult().getType());
  if (getOffsets().size() != static_cast<size_t>(src.getRank()))
    return emitOpError("needs one offset per source dimension (")
           << src.getRank() << "), got " << getOffsets().size();
  if (src.getElementType() != res.getElementType())
    return emitOpError("source and result element types differ");
  int64_t dropped = src.getRank() - res.getRank();
  if (dropped != 0 && !(dropped == 1 && src.getRank() == 3))
    return emitOpError("may only drop the stage dimension of a 3-D ring");
  ArrayRef<int64_t> srcShape = src.getShape().drop_front(dropped);
  for (auto [i, sizes] : llvm::enumerate(llvm::zip(srcShape, res.getShape()))) {
    auto [s, r] = sizes;
    // A shape parameter's size is checked once it is bound.
    if (ShapedType::isDynamic(s) || ShapedType::isDynamic(r))
      continue;
    if (r > s)
      return emitOpError("result dimension ")
             << i << " (" << r << ") exceeds the source (" << s << ")";
    std::optional<int64_t> off =
        getConstantIntValue(getOffsets()[i + dropped]);
    if (off && (*off < 0 || *off + r > s))
      return emitOpError("slice of dimension ")
             << i << " at " << *off << " runs out of the source";
  }
  // A swizzled tile's slice starts on a swizzle atom (8 lines of its width):
  // its accesses swizzle their offsets from the slice's corner, and the
  // tensor cores read it from there, so a corner inside an atom would put
  // every element of the lines the swizzle moves in the wrong place.
  SharedLayoutAttr layout = src.getSharedLayout();
  if (layout && layout.getSwizzle()) {
    int64_t width = layout.getSwizzle();
    int64_t bytes = getElementBytes(src.getElementType());
    OperandRange offs = getOffsets();
    int64_t row = knownMultiple(offs[offs.size() - 2]);
    int64_t col = knownMultiple(offs.back());
    if ((row * layout.getPitch()) % (8 * width) != 0)
      return emitOpError("starts at a row only known to be a multiple of ")
             << row << ", inside a swizzle atom of " << (8 * width) / layout.getPitch()
             << " rows";
    if ((col * bytes) % width != 0)
      return emitOpError("starts at a column only known to be a multiple of ")
             << col << " (" << col * bytes << " bytes), inside a " << width
             << "-byte swizzle atom";
  }
  return success();
}

/// Whether a register tile of `reg` moves whole to or from a shared tile of
/// `smem`: both 2-D of one shape, or 1-D of N elements and 1 x N.
static bool sameSharedShape(SmemTileType smem, RegTileType reg) {
  if (smem.getRank() != 2)
    return false;
  if (reg.getRank() == 1)
    return getTileDim(smem, 0) == TileDim{1, {}} &&
           getTileDim(smem, 1) == getTileDim(reg, 0) &&
           !(smem.getSharedLayout() && smem.getSharedLayout().getSwizzle());
  return sameShape(smem, reg);
}

LogicalResult ReadOp::verify() {
  auto src = cast<SmemTileType>(getSource().getType());
  auto res = cast<RegTileType>(getResult().getType());
  if (!sameSharedShape(src, res))
    return emitOpError("reads a 2-D shared tile into a register tile of its "
                       "shape, or an unswizzled 1 x N one into N elements");
  if (src.getElementType() != res.getElementType())
    return emitOpError("source and result element types differ");
  return success();
}

LogicalResult sparse_mla::tile::verifyMBarriers(Operation *op, Type bars) {
  auto type = cast<SmemTileType>(bars);
  if (type.getRank() != 2 || !type.getElementType().isInteger(64) ||
      getTileDim(type, 0) != TileDim{1, {}})
    return op->emitOpError("mbarriers are a 1 x N shared tile of i64, not ") << bars;
  return success();
}

LogicalResult sparse_mla::tile::verifyClusterAccess(Operation *op, bool remote) {
  auto kernel = op->getParentOfType<KernelOp>();
  if (remote && kernel && kernel.getClusterSize() == 1)
    return op->emitOpError("reaches another CTA's shared memory, but the kernel "
                           "has no clusters: give it `cluster(n)`");
  return success();
}

LogicalResult ClusterRankOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (kernel && kernel.getClusterSize() == 1)
    return emitOpError("needs a kernel launched in clusters: give it `cluster(n)`");
  return success();
}

LogicalResult WriteOp::verify() {
  if (failed(verifyClusterAccess(*this, static_cast<bool>(getCta()))))
    return failure();
  if (getBars()) {
    if (!getCta())
      return emitOpError("completes on a barrier only as an asynchronous write into a CTA "
                         "of the cluster: give `cta`");
    // `on %bars[]` parses: the index is optional only with the barriers.
    if (!getBarIndex())
      return emitOpError("completes on one mbarrier of `bars`: give its index, "
                         "`on %bars[%i]`");
    if (failed(verifyMBarriers(*this, getBars().getType())))
      return failure();
  } else if (getBarIndex()) {
    return emitOpError("has an mbarrier index but no mbarriers");
  }
  auto val = cast<RegTileType>(getValue().getType());
  auto dst = cast<SmemTileType>(getDest().getType());
  if (!sameSharedShape(dst, val))
    return emitOpError("writes a register tile into a 2-D shared tile of its "
                       "shape, or N elements into an unswizzled 1 x N one");
  Type from = val.getElementType(), to = dst.getElementType();
  if (from != to && !(from.isF32() && (to.isBF16() || to.isF16())))
    return emitOpError("can only convert f32 to bf16 or f16 on the way, not ")
           << from << " to " << to;
  return success();
}

static LogicalResult verifyCopyInto(Operation *op, MemRefType src,
                                    SmemTileType dst) {
  if (dst.getRank() != 2)
    return op->emitOpError("destination must be a 2-D shared tile");
  if (src.getElementType() != dst.getElementType())
    return op->emitOpError("source and destination element types differ");
  if (ShapedType::isDynamic(dst.getShape()[1]))
    return success(); // checked once the parameter is bound
  int64_t rowBytes = dst.getShape()[1] * getElementBytes(dst.getElementType());
  if (rowBytes % hopper::kAccessBytes)
    return op->emitOpError("copies whole ") << hopper::kAccessBytes << "-byte chunks; rows of "
           << rowBytes << " bytes are not";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  if (src.getRank() < 2)
    return emitOpError("source must have at least 2 dimensions");
  if (getIndices().size() != static_cast<size_t>(src.getRank()))
    return emitOpError("needs ") << src.getRank() << " indices, got "
                                 << getIndices().size();
  return verifyCopyInto(*this, src, cast<SmemTileType>(getDest().getType()));
}

LogicalResult GatherRowsOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto dst = cast<SmemTileType>(getDest().getType());
  if (src.getRank() != 2)
    return emitOpError("source must be a 2-D memref");
  if (failed(verifyCopyInto(*this, src, dst)))
    return failure();
  return verifyRowIndices(*this, cast<RegTileType>(getRows().getType()),
                          getTileDim(dst, 0));
}
