//===- ElementwiseToVector.cpp - Register-tile math to vector ops ---------===//
//
// A register tile is the vector of the elements one thread holds, so
// elementwise math is the same op on vectors, broadcasts are shuffles that
// pick the slice element of each row or column, and reductions combine a
// thread's elements of a row or column, butterfly across the lanes sharing
// it, and combine the warps' partials through shared scratch.
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

struct GridDimLowering : public OpConversionPattern<GridDimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::GridDimOp>(op, static_cast<gpu::Dimension>(op.getDim()));
    return success();
  }
};

struct ClusterRankLowering : public OpConversionPattern<ClusterRankOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ClusterRankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value rank = NVVM::ClusterId::create(rewriter, op.getLoc(), rewriter.getI32Type());
    rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, rewriter.getIndexType(), rank);
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

/// One MUFU instruction on each f32 element (`ex2.approx.ftz.f32` or
/// `lg2.approx.ftz.f32`): the forms the softmax of attention kernels uses
/// (libdevice's exp2f and log2f are much longer).
static Value lowerApprox(OpBuilder &b, Location loc, StringRef instruction, Value x) {
  auto vt = dyn_cast<VectorType>(x.getType());
  std::string ptx = (instruction + " $0, $1;").str();
  auto scalar = [&](Value s) -> Value {
    return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                     ValueRange{s}, ValueRange{}, ptx, Value())
        .getResult(0);
  };
  if (!vt)
    return scalar(x);
  SmallVector<Value> elems;
  for (int64_t i = 0; i < vt.getNumElements(); ++i)
    elems.push_back(scalar(vector::ExtractOp::create(b, loc, x, i)));
  return vector::FromElementsOp::create(b, loc, vt, elems);
}

/// The MUFU instruction of an f32 math op that has one, else "".
static StringRef approximation(Operation &op) {
  if (op.getNumResults() != 1 || !getElementTypeOrSelf(op.getResult(0)).isF32())
    return "";
  if (isa<math::Exp2Op>(op))
    return "ex2.approx.ftz.f32";
  if (isa<math::Log2Op>(op))
    return "lg2.approx.ftz.f32";
  return "";
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
      if (StringRef instruction = approximation(inner); !instruction.empty()) {
        mapping.map(inner.getResult(0), lowerApprox(rewriter, loc, instruction, operands[0]));
        continue;
      }
      // Math ops other than these would become libdevice calls.
      if (isa<math::MathDialect>(inner.getDialect()) && !isa<math::CtPopOp>(inner))
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

/// In the thread, then across the lanes of the warp with shuffles, then,
/// where the reduced dimension spans warps, each warp's partials through
/// the warpgroup's scratch: the threads of the warp's first row or column
/// write them, and every thread combines the warps' partials of its own
/// elements.
struct ReduceLowering : public OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = cast<RegTileType>(op.getSource().getType());
    auto resType = cast<RegTileType>(op.getType());
    FailureOr<Reduction> reduction = getReduction(srcType.getLayout(), op.getDim());
    if (failed(reduction))
      return op.emitOpError("reduction across warps is not supported for ")
             << srcType.getLayout();
    ThreadElements src = *getThreadElements(srcType.getLayout(), srcType.getShape());
    ThreadElements res = *getThreadElements(resType.getLayout(), resType.getShape());
    unsigned keep = 1 - op.getDim();
    auto combine = [&](OpBuilder &b, Value x, Value y) -> Value {
      if (op.getKind() == ReduceKind::add)
        return arith::AddFOp::create(b, loc, x, y);
      return arith::MaximumFOp::create(b, loc, x, y);
    };
    SmallVector<Value> partial(res.offsets.size());
    for (auto [i, off] : llvm::enumerate(src.offsets)) {
      Value e = vector::ExtractOp::create(rewriter, loc, adaptor.getSource(),
                                          static_cast<int64_t>(i));
      Value &acc = partial[slicePosition(res, off[keep])];
      acc = acc ? combine(rewriter, acc, e) : e;
    }
    Value width = i32Const(rewriter, loc, hopper::kWarpThreads);
    for (Value &acc : partial)
      for (unsigned m : reduction->laneMasks) {
        auto shfl = gpu::ShuffleOp::create(rewriter, loc, acc,
                                           i32Const(rewriter, loc, m), width,
                                           gpu::ShuffleMode::XOR);
        acc = combine(rewriter, acc, shfl.getShuffleResult());
      }
    if (reduction->warps > 1) {
      Type elt = resType.getElementType();
      int64_t kept = resType.getShape()[0];
      Value tid = threadInWarpgroup(rewriter, loc);
      Value warp = arith::DivUIOp::create(rewriter, loc, tid, width);
      Value lane = arith::RemUIOp::create(rewriter, loc, tid, width);
      Value base = warpgroupScratch(rewriter, loc, cast<ScratchOpInterface>(*op));
      Value first = threadBaseCoords(rewriter, loc, resType.getLayout(), 1)[0];
      auto slot = [&](OpBuilder &b, Value w, int64_t i) {
        Value at = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, w, i32Const(b, loc, kept)),
            arith::AddIOp::create(b, loc, first, i32Const(b, loc, res.offsets[i][0])));
        return LLVM::GEPOp::create(b, loc, base.getType(), elt, base, ValueRange{at});
      };
      // The writers: the lanes whose coordinate along the reduced dimension
      // is the warp's first.
      BaseTerm along = getBaseTerms(srcType.getLayout(), 2)[op.getDim()];
      along.warpScale = 0;
      Value inWarp = evalBaseTerm(rewriter, loc, lane, along);
      Value writer = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, inWarp,
                                           i32Const(rewriter, loc, 0));
      // The scratch may still be read by an earlier reduction.
      warpgroupBarrier(rewriter, loc);
      ifThen(rewriter, loc, writer, [&](OpBuilder &b) {
        for (auto [i, acc] : llvm::enumerate(partial))
          LLVM::StoreOp::create(b, loc, acc, slot(b, warp, i));
      });
      warpgroupBarrier(rewriter, loc);
      for (auto [i, acc] : llvm::enumerate(partial)) {
        acc = Value();
        for (int64_t w = 0; w < reduction->warps; ++w) {
          Value x = LLVM::LoadOp::create(rewriter, loc, elt,
                                         slot(rewriter, i32Const(rewriter, loc, w), i));
          acc = acc ? combine(rewriter, acc, x) : x;
        }
      }
    }
    auto vt = cast<VectorType>(getTypeConverter()->convertType(resType));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, partial);
    return success();
  }
};

/// Each element's coordinate: the thread's base plus the element's offset.
struct IotaLowering : public OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    auto vt = cast<VectorType>(getTypeConverter()->convertType(type));
    unsigned dim = op.getDim();
    Value base = threadBaseCoords(rewriter, loc, type.getLayout(), te.rank)[dim];
    SmallVector<int32_t> offsets;
    for (auto &off : te.offsets)
      offsets.push_back(off[dim]);
    Value splat = vector::BroadcastOp::create(rewriter, loc, vt, base);
    Value cst = arith::ConstantOp::create(rewriter, loc,
                                          DenseIntElementsAttr::get(vt, offsets));
    rewriter.replaceOpWithNewOp<arith::AddIOp>(op, splat, cst);
    return success();
  }
};

/// A blocked tile's row is spread over `lanes` threads, each holding runs of
/// `vector` elements every `lanes * vector` columns. Each run is scanned in
/// the thread, its total across the lanes of a warp by shuffles (up, then
/// the last lane's for the whole), and, for rows wider than a warp, across
/// the warps through shared scratch; runs to the left add a carry.
struct ScanLowering : public OpConversionPattern<ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getType());
    auto blocked = cast<BlockedLayoutAttr>(type.getLayout()); // the verifier's rule
    ThreadElements te = *getThreadElements(blocked, type.getShape());
    int64_t v = te.vector, lanes = blocked.getLanes();
    int64_t colRuns = type.getShape()[1] / (lanes * v);
    int64_t runs = te.offsets.size() / v;
    int64_t width = std::min<int64_t>(lanes, hopper::kWarpThreads), rowWarps = lanes / width;

    Type elt = type.getElementType();
    bool add = op.getKind() == ReduceKind::add, isFloat = isa<FloatType>(elt);
    Attribute idAttr =
        add ? rewriter.getZeroAttr(elt)
        : isFloat ? Attribute(rewriter.getFloatAttr(elt, -INFINITY))
                  : Attribute(rewriter.getIntegerAttr(elt, APInt::getSignedMinValue(32)));
    Value identity = arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(idAttr));
    auto combine = [&](Value a, Value b) -> Value {
      if (add)
        return isFloat ? arith::AddFOp::create(rewriter, loc, a, b).getResult()
                       : arith::AddIOp::create(rewriter, loc, a, b).getResult();
      return isFloat ? arith::MaximumFOp::create(rewriter, loc, a, b).getResult()
                     : arith::MaxSIOp::create(rewriter, loc, a, b).getResult();
    };
    auto shuffle = [&](Value x, int64_t offset, gpu::ShuffleMode mode) {
      return gpu::ShuffleOp::create(rewriter, loc, x, i32Const(rewriter, loc, offset),
                                    i32Const(rewriter, loc, width), mode);
    };

    // In the thread, then across the lanes of the row in its warp.
    SmallVector<Value> elems;
    SmallVector<Value> lanesBefore(runs), warpTotal(runs);
    for (int64_t r = 0; r < runs; ++r) {
      Value x;
      for (int64_t e = 0; e < v; ++e) {
        Value y = vector::ExtractOp::create(rewriter, loc, adaptor.getSource(), r * v + e);
        x = x ? combine(x, y) : y;
        elems.push_back(x);
      }
      Value incl = x;
      for (int64_t d = 1; d < width; d *= 2) {
        auto up = shuffle(incl, d, gpu::ShuffleMode::UP);
        incl = arith::SelectOp::create(rewriter, loc, up.getValid(),
                                       combine(incl, up.getShuffleResult()), incl);
      }
      auto before = shuffle(incl, 1, gpu::ShuffleMode::UP);
      lanesBefore[r] = arith::SelectOp::create(rewriter, loc, before.getValid(),
                                               before.getShuffleResult(), identity);
      warpTotal[r] = shuffle(incl, width - 1, gpu::ShuffleMode::IDX).getShuffleResult();
    }

    // Across the warps of a row: each warp's totals through the scratch.
    SmallVector<Value> warpsBefore(runs, identity), rowTotal(warpTotal);
    if (rowWarps > 1) {
      Value tid = threadInWarpgroup(rewriter, loc);
      Value warp = arith::DivUIOp::create(rewriter, loc, tid,
                                          i32Const(rewriter, loc, hopper::kWarpThreads));
      Value lane = arith::RemUIOp::create(rewriter, loc, tid,
                                          i32Const(rewriter, loc, hopper::kWarpThreads));
      Value base = warpgroupScratch(rewriter, loc, cast<ScratchOpInterface>(*op));
      auto slot = [&](OpBuilder &b, int64_t r, Value w) {
        Value i = arith::AddIOp::create(b, loc, i32Const(b, loc, 4 * r), w);
        return LLVM::GEPOp::create(b, loc, base.getType(), elt, base, ValueRange{i});
      };
      // The scratch may still be read by an earlier scan.
      warpgroupBarrier(rewriter, loc);
      Value last = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane,
                                         i32Const(rewriter, loc, 31));
      ifThen(rewriter, loc, last, [&](OpBuilder &b) {
        for (int64_t r = 0; r < runs; ++r)
          LLVM::StoreOp::create(b, loc, warpTotal[r], slot(b, r, warp));
      });
      warpgroupBarrier(rewriter, loc);
      Value inRow = arith::RemUIOp::create(rewriter, loc, warp, i32Const(rewriter, loc, rowWarps));
      Value firstWarp = arith::SubIOp::create(rewriter, loc, warp, inRow);
      for (int64_t r = 0; r < runs; ++r) {
        rowTotal[r] = identity;
        for (int64_t w = 0; w < rowWarps; ++w) {
          Value t = LLVM::LoadOp::create(
              rewriter, loc, elt,
              slot(rewriter, r,
                   arith::AddIOp::create(rewriter, loc, firstWarp, i32Const(rewriter, loc, w))));
          rowTotal[r] = combine(rowTotal[r], t);
          Value earlier = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                                i32Const(rewriter, loc, w), inRow);
          warpsBefore[r] = arith::SelectOp::create(rewriter, loc, earlier,
                                                   combine(warpsBefore[r], t), warpsBefore[r]);
        }
      }
    }

    // Runs to the left in the row carry in (runs list each row's in order).
    Value carry;
    for (int64_t r = 0; r < runs; ++r) {
      if (r % colRuns == 0)
        carry = identity;
      Value offset = combine(combine(lanesBefore[r], warpsBefore[r]), carry);
      for (int64_t e = 0; e < v; ++e)
        elems[r * v + e] = combine(elems[r * v + e], offset);
      carry = combine(carry, rowTotal[r]);
    }
    auto vt = cast<VectorType>(getTypeConverter()->convertType(type));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateElementwiseToVectorPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BlockIdLowering, GridDimLowering, ClusterRankLowering, WarpgroupIdLowering,
               SplatLowering, MapLowering, BroadcastLowering, ReduceLowering, IotaLowering,
               ScanLowering>(
      converter, patterns.getContext());
}
