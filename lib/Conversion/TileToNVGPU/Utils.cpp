//===- Utils.cpp - Shared helpers of the tile lowering --------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

TileTypeConverter::TileTypeConverter(MLIRContext *ctx) {
  addConversion([](Type t) { return t; });
  addConversion([](RegTileType t) -> std::optional<Type> {
    FailureOr<ThreadElements> te = getThreadElements(t.getLayout(), t.getShape());
    if (failed(te))
      return std::nullopt;
    return VectorType::get({static_cast<int64_t>(te->offsets.size())},
                           t.getElementType());
  });
  addConversion([ctx](SmemTileType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 3);
  });
  addConversion([ctx](TokenType) -> Type { return IntegerType::get(ctx, 32); });
}

Value sparse_mla::tile::i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value sparse_mla::tile::i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}

Value sparse_mla::tile::toI64(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  if (v.getType().isInteger(64))
    return v;
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
}

Value sparse_mla::tile::toI32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  if (v.getType().isInteger(32))
    return v;
  return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
}

Value sparse_mla::tile::threadInWarpgroup(OpBuilder &b, Location loc) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value t32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), tid);
  return arith::RemUIOp::create(b, loc, t32, i32Const(b, loc, 128));
}

Value sparse_mla::tile::warpgroupIndex(OpBuilder &b, Location loc) {
  Value tid = toI32(b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value wg = arith::DivUIOp::create(b, loc, tid, i32Const(b, loc, 128));
  // As CUTLASS does: what derives from a value ptxas knows to be uniform
  // (shared addresses, wgmma descriptors) lives in uniform registers.
  return gpu::ShuffleOp::create(b, loc, wg, i32Const(b, loc, 0), i32Const(b, loc, 32),
                                gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

Value sparse_mla::tile::evalBaseTerm(OpBuilder &b, Location loc, Value tid,
                                     const BaseTerm &t) {
  Value v = tid;
  if (t.divisor != 1)
    v = arith::DivUIOp::create(b, loc, v, i32Const(b, loc, t.divisor));
  if (t.modulus)
    v = arith::RemUIOp::create(b, loc, v, i32Const(b, loc, t.modulus));
  v = arith::MulIOp::create(b, loc, v, i32Const(b, loc, t.scale));
  if (t.warpScale) {
    Value warp = arith::DivUIOp::create(b, loc, tid, i32Const(b, loc, 32));
    Value w = arith::MulIOp::create(b, loc, warp, i32Const(b, loc, t.warpScale));
    v = arith::AddIOp::create(b, loc, v, w);
  }
  return v;
}

SmallVector<Value, 2> sparse_mla::tile::threadBaseCoords(OpBuilder &b,
                                                         Location loc,
                                                         Attribute layout,
                                                         unsigned rank) {
  Value tid = threadInWarpgroup(b, loc);
  SmallVector<Value, 2> coords;
  for (const BaseTerm &t : getBaseTerms(layout, rank))
    coords.push_back(evalBaseTerm(b, loc, tid, t));
  return coords;
}

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

SmallVector<Value> sparse_mla::tile::rowMajorStrides(OpBuilder &b, Location loc,
                                                     Value memref) {
  int64_t rank = cast<MemRefType>(memref.getType()).getRank();
  SmallVector<Value> strides(rank);
  strides[rank - 1] = i64Const(b, loc, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = arith::MulIOp::create(b, loc, strides[d + 1],
                                       memrefDim(b, loc, memref, d + 1));
  return strides;
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

Value sparse_mla::tile::sharedByteOffset(OpBuilder &b, Location loc,
                                         SharedLayoutAttr layout,
                                         unsigned elementBytes, Value row,
                                         Value col) {
  int64_t width = layout.getSwizzle() ? layout.getSwizzle() : layout.getPitch();
  Value x = arith::MulIOp::create(b, loc, col, i32Const(b, loc, elementBytes));
  Value blk = arith::DivUIOp::create(b, loc, x, i32Const(b, loc, width));
  Value inBlk = arith::RemUIOp::create(b, loc, x, i32Const(b, loc, width));
  Value off = arith::MulIOp::create(b, loc, blk,
                                    i32Const(b, loc, layout.getBlockStride()));
  off = arith::AddIOp::create(
      b, loc, off,
      arith::MulIOp::create(b, loc, row, i32Const(b, loc, layout.getPitch())));
  off = arith::AddIOp::create(b, loc, off, inBlk);
  if (unsigned s = layout.getSwizzle()) {
    Value line = arith::ShRUIOp::create(b, loc, off, i32Const(b, loc, 7));
    Value phase = arith::AndIOp::create(b, loc, line, i32Const(b, loc, s / 16 - 1));
    Value mask = arith::ShLIOp::create(b, loc, phase, i32Const(b, loc, 4));
    off = arith::XOrIOp::create(b, loc, off, mask);
  }
  return off;
}

Value sparse_mla::tile::bytePointer(OpBuilder &b, Location loc, Value base,
                                    Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{offset});
}

int64_t sparse_mla::tile::slicePosition(const ThreadElements &slice,
                                        int64_t coord) {
  for (auto [i, off] : llvm::enumerate(slice.offsets))
    if (off[0] == coord)
      return i;
  llvm_unreachable("coordinate not held by this thread");
}
