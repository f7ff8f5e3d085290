//===- Addressing.cpp - Global and shared-memory addresses ------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

Value sparse_mla::tile::globalBasePointer(OpBuilder &b, Location loc,
                                          Value memref) {
  Value idx = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), idx);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), i64);
}

Value sparse_mla::tile::memrefDim(OpBuilder &b, Location loc, Value memref,
                                  unsigned d) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(d))
    return i64Const(b, loc, type.getDimSize(d));
  Value dim = memref::DimOp::create(b, loc, memref, d);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), dim);
}

SmallVector<Value> sparse_mla::tile::memrefStrides(OpBuilder &b, Location loc,
                                                   Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> strides(rank);
  if (type.getLayout().isIdentity()) {
    strides[rank - 1] = i64Const(b, loc, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = arith::MulIOp::create(b, loc, strides[d + 1],
                                         memrefDim(b, loc, memref, d + 1));
    return strides;
  }
  // A strided layout (rows apart by a stride of the descriptor).
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  for (int64_t d = 0; d < rank; ++d)
    strides[d] = arith::IndexCastOp::create(b, loc, b.getI64Type(), meta.getStrides()[d]);
  return strides;
}

Value sparse_mla::tile::rowPitch(OpBuilder &b, Location loc, Value memref) {
  return memrefStrides(b, loc, memref)[cast<MemRefType>(memref.getType()).getRank() - 2];
}

Value sparse_mla::tile::sharedBasePointer(OpBuilder &b, Location loc) {
  auto i8 = b.getI8Type();
  auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get({ShapedType::kDynamic}, i8, AffineMap(), space);
  Value dyn = gpu::DynamicSharedMemoryOp::create(b, loc, type);
  Value idx = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dyn);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), idx);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), i64);
}

namespace {
/// sharedByteOffset's arithmetic as i32 IR.
struct IRArith {
  using Value = mlir::Value;
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return i32Const(b, loc, v); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, loc, x, y); }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, loc, x, y); }
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
};
} // namespace

Value sparse_mla::tile::sharedByteOffset(OpBuilder &b, Location loc,
                                         SharedLayoutAttr layout,
                                         unsigned elementBytes, Value row,
                                         Value col) {
  IRArith a{b, loc};
  return sparse_mla::tile::sharedByteOffset(a, layout, elementBytes, row, col);
}

Value sparse_mla::tile::bytePointer(OpBuilder &b, Location loc, Value base,
                                    Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{offset});
}

Value sparse_mla::tile::warpgroupScratch(OpBuilder &b, Location loc, ScratchOpInterface op) {
  auto [offset, stride] = *op.getScratchPlace();
  Value region = arith::AddIOp::create(
      b, loc, i32Const(b, loc, offset),
      arith::MulIOp::create(b, loc, warpgroupIndex(b, loc), i32Const(b, loc, stride)));
  return bytePointer(b, loc, sharedBasePointer(b, loc), region);
}

/// Whether every thread's runs of `layout` start in the first 16-byte chunk
/// of their row: base column bytes plus the run stay below 16.
static bool runsStartInFirstChunk(Attribute layout, unsigned elementBytes,
                                  unsigned vector) {
  BaseTerm col = getBaseTerms(layout, 2)[1];
  int64_t steps = col.modulus ? col.modulus - 1 : 127 / col.divisor;
  int64_t maxCol = steps * col.scale + 3 * col.warpScale;
  return (maxCol + vector) * elementBytes <= hopper::kAccessBytes;
}

/// Shared-memory address of each run of a register tile (in `regLayout`,
/// runs of `vector` elements) in a shared tile. Where possible the address
/// is the thread's base address, XORed with a constant that moves 16-byte
/// chunks inside the swizzle row, plus a constant that moves whole swizzle
/// atoms: one register per thread and at most one instruction per access,
/// instead of a register per run. Else it is computed in full.
Value sparse_mla::tile::sharedRunPointer(OpBuilder &b, Location loc, Value base,
                              SmemTileType type, const Run &tileRun,
                              Attribute regLayout, unsigned vector) {
  // A 1-D tile is row 0 of a 1 x N shared tile (unswizzled: one row).
  Run run = tileRun;
  if (run.offsets.size() == 1) {
    Value zero = i32Const(b, loc, 0);
    run.offsets.insert(run.offsets.begin(), 0);
    run.base.insert(run.base.begin(), zero);
    run.coords.insert(run.coords.begin(), zero);
  }
  SharedLayoutAttr layout = type.getSharedLayout();
  unsigned e = getElementBytes(type.getElementType());
  int64_t dr = run.offsets[0], dc = run.offsets[1] * e;
  auto fromBase = [&](int64_t chunkXor, int64_t delta) {
    Value off = sharedByteOffset(b, loc, layout, e, run.base[0], run.base[1]);
    if (chunkXor)
      off = arith::XOrIOp::create(b, loc, off, i32Const(b, loc, chunkXor));
    if (delta)
      off = arith::AddIOp::create(b, loc, off, i32Const(b, loc, delta));
    return bytePointer(b, loc, base, off);
  };
  unsigned s = layout.getSwizzle();
  if (!s) // unswizzled rows: offsets are linear
    return fromBase(0, dr * layout.getPitch() + dc);
  // The swizzle XORs the chunk bits (4..) with the line bits (7..) of the
  // offset. A delta that is a multiple of 8 swizzle rows leaves both alone;
  // a chunk move XORs in if the base has no chunk bits (its runs start in
  // the first chunk of a row and rows are whole swizzle rows).
  int64_t inRow = dc % s;
  int64_t delta = (dc / s) * layout.getBlockStride() + dr * layout.getPitch();
  bool xorable = inRow == 0 || (inRow % 16 == 0 && layout.getPitch() % s == 0 &&
                                runsStartInFirstChunk(regLayout, e, vector));
  if (delta % (8 * s) == 0 && xorable)
    return fromBase(inRow, delta);
  Value off = sharedByteOffset(b, loc, layout, e, run.coords[0], run.coords[1]);
  return bytePointer(b, loc, base, off);
}

mlir::Value sparse_mla::tile::readRunsFromShared(OpBuilder &b, Location loc, RegTileType type,
                                                VectorType vt, Value srcBase, SmemTileType src) {
  ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
  Type runType = accessType(type.getElementType(), te.vector);
  unsigned bytes = getElementBytes(type.getElementType());
  SmallVector<Value> elems(vt.getNumElements());
  for (Run &run : runsOf(b, loc, type.getLayout(), te)) {
    Value ptr = sharedRunPointer(b, loc, srcBase, src, run, type.getLayout(), te.vector);
    Value v = LLVM::LoadOp::create(b, loc, runType, ptr, te.vector * bytes);
    insertRun(b, loc, elems, v, run.first);
  }
  return vector::FromElementsOp::create(b, loc, vt, elems);
}

void sparse_mla::tile::writeRunsToShared(OpBuilder &b, Location loc, Value value,
                              RegTileType type, Value dstBase, SmemTileType dst,
                              const RunStore &store) {
  ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
  Type to = dst.getElementType();
  unsigned bytes = getElementBytes(to);
  for (Run &run : runsOf(b, loc, type.getLayout(), te)) {
    Value v = extractRun(b, loc, value, run.first, te.vector);
    if (to != type.getElementType())
      v = arith::TruncFOp::create(b, loc, accessType(to, te.vector), v);
    Value ptr = sharedRunPointer(b, loc, dstBase, dst, run, type.getLayout(), te.vector);
    if (store)
      store(b, loc, v, ptr);
    else
      LLVM::StoreOp::create(b, loc, v, ptr, te.vector * bytes);
  }
}

WindowAccess::WindowAccess(OpBuilder &b, Location loc, Value memref,
                           ValueRange idx, ValueRange bnds, unsigned tileRank) {
  base = globalBasePointer(b, loc, memref);
  strides = memrefStrides(b, loc, memref);
  for (Value v : idx)
    indices.push_back(toI64(b, loc, v));
  for (Value v : bnds)
    bounds.push_back(toI64(b, loc, v));
  firstTileDim = indices.size() - tileRank;
}

Value WindowAccess::pointer(OpBuilder &b, Location loc, Type elt,
                            ArrayRef<Value> coords) {
  Value linear = i64Const(b, loc, 0);
  for (size_t d = 0; d < indices.size(); ++d) {
    Value i = indices[d];
    if (d >= firstTileDim)
      i = arith::AddIOp::create(b, loc, i, toI64(b, loc, coords[d - firstTileDim]));
    linear = arith::AddIOp::create(b, loc, linear,
                                   arith::MulIOp::create(b, loc, i, strides[d]));
  }
  return LLVM::GEPOp::create(b, loc, base.getType(), elt, base,
                             ValueRange{linear});
}

SmallVector<Value, 2> WindowAccess::shifted(OpBuilder &b, Location loc,
                                            ArrayRef<Value> coords, int64_t k) {
  SmallVector<Value, 2> c(coords);
  if (k)
    c.back() = arith::AddIOp::create(b, loc, c.back(), i32Const(b, loc, k));
  return c;
}

Value WindowAccess::inBounds(OpBuilder &b, Location loc, ArrayRef<Value> coords) {
  Value ok;
  for (size_t d = 0; d < bounds.size(); ++d) {
    Value i = arith::AddIOp::create(b, loc, toI32(b, loc, indices[firstTileDim + d]),
                                    coords[d]);
    Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                    toI32(b, loc, bounds[d]));
    ok = ok ? arith::AndIOp::create(b, loc, ok, c) : c;
  }
  return ok;
}
