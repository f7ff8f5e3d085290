//===- ElementsToNVVM.cpp - Gathers, scatters and atomics by position ----===//
//
// Each element a thread holds is accessed on its own, at the address of its
// position (row-major over a memref, or over a shared tile, swizzle applied),
// under the predicate that the position is not negative. Threads that hold a
// replica of a sliced tile's element leave writes to the one that owns it.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Address of the element at `pos` (i32, not negative) of `memory`: a global
/// memref with the identity layout, or a 2-D shared tile.
static Value elementPointer(OpBuilder &b, Location loc, Type memoryType,
                            Value memory, Value pos) {
  auto smem = dyn_cast<SmemTileType>(memoryType);
  Type elt = cast<ShapedType>(memoryType).getElementType();
  if (!smem) {
    Value base = globalBasePointer(b, loc, memory);
    return LLVM::GEPOp::create(b, loc, base.getType(), elt, base,
                               ValueRange{toI64(b, loc, pos)});
  }
  SharedLayoutAttr layout = smem.getSharedLayout();
  unsigned bytes = getElementBytes(elt);
  int64_t rowBytes = smem.getShape()[1] * bytes;
  // Rows one after another: the offset is linear (and constant parts of
  // the positions fold into the addresses).
  if (!layout.getSwizzle() && layout.getPitch() == rowBytes)
    return bytePointer(b, loc, memory,
                       arith::MulIOp::create(b, loc, pos, i32Const(b, loc, bytes)));
  Value cols = i32Const(b, loc, smem.getShape()[1]);
  Value row = arith::DivUIOp::create(b, loc, pos, cols);
  Value col = arith::RemUIOp::create(b, loc, pos, cols);
  return bytePointer(b, loc, memory, sharedByteOffset(b, loc, layout, bytes, row, col));
}

static Value isPosition(OpBuilder &b, Location loc, Value pos) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pos,
                               i32Const(b, loc, 0));
}

/// `then(b)` where `pos` is a position (not negative), else `otherwise`.
static Value ifPosition(OpBuilder &b, Location loc, Value pos, Value otherwise,
                        function_ref<Value(OpBuilder &)> then) {
  auto ifOp = scf::IfOp::create(b, loc, otherwise.getType(), isPosition(b, loc, pos),
                                /*withElseRegion=*/true);
  OpBuilder thenB = ifOp.getThenBodyBuilder();
  scf::YieldOp::create(thenB, loc, then(thenB));
  OpBuilder elseB = ifOp.getElseBodyBuilder();
  scf::YieldOp::create(elseB, loc, otherwise);
  return ifOp.getResult(0);
}

/// The elements of a thread's tile, one by one: calls `each(i, pos)`
/// with the element's index in the thread's vector and its position.
static void forEachElement(OpBuilder &b, Location loc, Value positions,
                           function_ref<void(int64_t, Value)> each) {
  auto vt = cast<VectorType>(positions.getType());
  for (int64_t i = 0; i < vt.getNumElements(); ++i)
    each(i, vector::ExtractOp::create(b, loc, positions, i));
}

struct GatherLowering : public OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type memoryType = op.getSource().getType();
    Type elt = cast<RegTileType>(op.getType()).getElementType();
    auto vt = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    SmallVector<Value> elems(vt.getNumElements());
    forEachElement(rewriter, loc, adaptor.getPositions(), [&](int64_t i, Value pos) {
      auto load = [&](OpBuilder &b) -> Value {
        return LLVM::LoadOp::create(
            b, loc, elt, elementPointer(b, loc, memoryType, adaptor.getSource(), pos));
      };
      // Without a pad every position is valid: no check.
      elems[i] = adaptor.getPad() ? ifPosition(rewriter, loc, pos, adaptor.getPad(), load)
                                  : load(rewriter);
    });
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

struct ScatterLowering : public OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type memoryType = op.getDest().getType();
    Value owner = ownerPredicate(rewriter, loc,
                                 cast<RegTileType>(op.getValue().getType()).getLayout());
    forEachElement(rewriter, loc, adaptor.getPositions(), [&](int64_t i, Value pos) {
      Value v = vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), i);
      ifThen(rewriter, loc, andOpt(rewriter, loc, owner, isPosition(rewriter, loc, pos)),
             [&](OpBuilder &b) {
               LLVM::StoreOp::create(
                   b, loc, v, elementPointer(b, loc, memoryType, adaptor.getDest(), pos));
             });
    });
    rewriter.eraseOp(op);
    return success();
  }
};

static LLVM::AtomicBinOp binOp(AtomicKind kind, Type elt) {
  switch (kind) {
  case AtomicKind::add:
    return elt.isF32() ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  case AtomicKind::bitwise_or:
    return LLVM::AtomicBinOp::_or;
  case AtomicKind::max:
    return LLVM::AtomicBinOp::max;
  }
  llvm_unreachable("unknown atomic kind");
}

struct AtomicRMWLowering : public OpConversionPattern<AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type memoryType = op.getDest().getType();
    auto type = cast<RegTileType>(op.getType());
    // Every thread returns the old value of its own elements: a replica
    // could not, so each element must live in one thread.
    if (isa<SliceLayoutAttr>(type.getLayout()))
      return op.emitOpError("needs a layout that holds each element in one "
                            "thread, not ")
             << type.getLayout();
    Type elt = type.getElementType();
    auto vt = cast<VectorType>(getTypeConverter()->convertType(type));
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(elt));
    SmallVector<Value> elems(vt.getNumElements());
    forEachElement(rewriter, loc, adaptor.getPositions(), [&](int64_t i, Value pos) {
      Value v = vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), i);
      elems[i] = ifPosition(rewriter, loc, pos, zero, [&](OpBuilder &b) -> Value {
        Value ptr = elementPointer(b, loc, memoryType, adaptor.getDest(), pos);
        return LLVM::AtomicRMWOp::create(b, loc, binOp(op.getKind(), elt), ptr, v,
                                         LLVM::AtomicOrdering::monotonic);
      });
    });
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateElementsToNVVMPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<GatherLowering, ScatterLowering, AtomicRMWLowering>(
      converter, patterns.getContext());
}
