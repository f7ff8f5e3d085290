//===- ElementwiseToVector.cpp - Register-tile math to vector ops ---------===//
//
// A register tile is the vector of the elements one thread holds, so
// elementwise math is the same op on vectors, broadcasts are shuffles that
// pick the slice element of each row or column, and reductions combine a
// thread's elements of a row and then butterfly across the lanes sharing it.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct BlockIdLowering : public OpConversionPattern<BlockIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BlockIdOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::BlockIdOp>(
        op, static_cast<gpu::Dimension>(op.getDim()));
    return success();
  }
};

struct WarpgroupIdLowering : public OpConversionPattern<WarpgroupIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WarpgroupIdOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(
        op, rewriter.getIndexType(), warpgroupIndex(rewriter, loc));
    return success();
  }
};

struct SplatLowering : public OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type, adaptor.getValue());
    return success();
  }
};

/// `ex2.approx.ftz.f32` on each element: one MUFU instruction, the form the
/// softmax of attention kernels uses (libdevice's exp2f is much longer).
static Value lowerExp2(OpBuilder &b, Location loc, Value x) {
  auto vt = dyn_cast<VectorType>(x.getType());
  auto scalar = [&](Value s) -> Value {
    return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                     ValueRange{s}, ValueRange{},
                                     "ex2.approx.ftz.f32 $0, $1;", Value())
        .getResult(0);
  };
  if (!vt)
    return scalar(x);
  SmallVector<Value> elems;
  for (int64_t i = 0; i < vt.getNumElements(); ++i)
    elems.push_back(scalar(vector::ExtractOp::create(b, loc, x, i)));
  return vector::FromElementsOp::create(b, loc, vt, elems);
}

struct MapLowering : public OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MapOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType =
        cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    int64_t n = resultType.getNumElements();
    Block &body = op.getBody().front();
    IRMapping mapping;
    for (auto [arg, in] : llvm::zip(body.getArguments(), adaptor.getInputs()))
      mapping.map(arg, in);
    // Values from above and constants of the body are scalars: splat them.
    auto vectorOf = [&](Value v) -> Value {
      Value m = mapping.lookupOrDefault(v);
      if (isa<VectorType>(m.getType()))
        return m;
      return vector::BroadcastOp::create(
          rewriter, loc, VectorType::get({n}, m.getType()), m);
    };
    for (Operation &inner : body.without_terminator()) {
      if (isa<arith::ConstantOp>(inner)) {
        mapping.map(inner.getResult(0), rewriter.clone(inner)->getResult(0));
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : inner.getOperands())
        operands.push_back(vectorOf(v));
      if (isa<math::Exp2Op>(inner) &&
          getElementTypeOrSelf(inner.getResult(0)).isF32()) {
        mapping.map(inner.getResult(0), lowerExp2(rewriter, loc, operands[0]));
        continue;
      }
      if (isa<math::MathDialect>(inner.getDialect()))
        return rewriter.notifyMatchFailure(op, "math op without a lowering");
      OperationState state(inner.getLoc(), inner.getName(), operands,
                           llvm::map_to_vector(inner.getResultTypes(),
                                               [&](Type t) -> Type {
                                                 return VectorType::get({n}, t);
                                               }),
                           inner.getAttrs());
      Operation *vec = rewriter.create(state);
      for (auto [from, to] : llvm::zip(inner.getResults(), vec->getResults()))
        mapping.map(from, to);
    }
    Value yielded = body.getTerminator()->getOperand(0);
    rewriter.replaceOp(op, vectorOf(yielded));
    return success();
  }
};

struct BroadcastLowering : public OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resType = cast<RegTileType>(op.getType());
    auto srcType = cast<RegTileType>(op.getSource().getType());
    ThreadElements res = *getThreadElements(resType.getLayout(), resType.getShape());
    ThreadElements src = *getThreadElements(srcType.getLayout(), srcType.getShape());
    unsigned keep = 1 - op.getDim();
    SmallVector<int64_t> mask;
    for (auto &off : res.offsets)
      mask.push_back(slicePosition(src, off[keep]));
    rewriter.replaceOpWithNewOp<vector::ShuffleOp>(op, adaptor.getSource(),
                                                   adaptor.getSource(), mask);
    return success();
  }
};

struct ReduceLowering : public OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = cast<RegTileType>(op.getSource().getType());
    auto resType = cast<RegTileType>(op.getType());
    FailureOr<SmallVector<unsigned>> masks =
        getReductionLaneMasks(srcType.getLayout(), op.getDim());
    if (failed(masks))
      return op.emitOpError("reduction across warps is not supported for ")
             << srcType.getLayout();
    ThreadElements src = *getThreadElements(srcType.getLayout(), srcType.getShape());
    ThreadElements res = *getThreadElements(resType.getLayout(), resType.getShape());
    unsigned keep = 1 - op.getDim();
    auto combine = [&](Value a, Value b) -> Value {
      if (op.getKind() == ReduceKind::add)
        return arith::AddFOp::create(rewriter, loc, a, b);
      return arith::MaximumFOp::create(rewriter, loc, a, b);
    };
    SmallVector<Value> partial(res.offsets.size());
    for (auto [i, off] : llvm::enumerate(src.offsets)) {
      Value e = vector::ExtractOp::create(rewriter, loc, adaptor.getSource(),
                                          static_cast<int64_t>(i));
      Value &acc = partial[slicePosition(res, off[keep])];
      acc = acc ? combine(acc, e) : e;
    }
    Value width = i32Const(rewriter, loc, 32);
    for (Value &acc : partial)
      for (unsigned m : *masks) {
        auto shfl = gpu::ShuffleOp::create(rewriter, loc, acc,
                                           i32Const(rewriter, loc, m), width,
                                           gpu::ShuffleMode::XOR);
        acc = combine(acc, shfl.getShuffleResult());
      }
    auto vt = cast<VectorType>(getTypeConverter()->convertType(resType));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, partial);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateElementwiseToVectorPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BlockIdLowering, WarpgroupIdLowering, SplatLowering, MapLowering,
               BroadcastLowering, ReduceLowering>(converter,
                                                  patterns.getContext());
}
