//===- BarriersToNVGPU.cpp - CTA barriers and votes -----------------------===//
//
// tile.barrier is a CTA barrier behind a proxy fence (thread writes to
// shared memory are next read by wgmma); tile.any is a barrier reduction.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct BarrierLowering : public OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Shared tiles written by threads may next be read by wgmma (the async
    // proxy): the fence orders the writes for it.
    NVVM::FenceProxyOp::create(
        rewriter, op.getLoc(), NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
    return success();
  }
};

/// Each thread ORs the elements it holds; `bar.red.or` combines the threads
/// of the CTA and hands every one the result.
struct AnyLowering : public OpConversionPattern<AnyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AnyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value mine = vector::ReductionOp::create(rewriter, loc, vector::CombiningKind::OR,
                                             adaptor.getPred());
    auto any = NVVM::BarrierOp::create(
        rewriter, loc, TypeRange{i32}, Value(), Value(),
        NVVM::BarrierReductionAttr::get(getContext(), NVVM::BarrierReduction::OR),
        arith::ExtUIOp::create(rewriter, loc, i32, mine));
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::ne,
                                               any.getRes(), i32Const(rewriter, loc, 0));
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateBarriersToNVGPUPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BarrierLowering, AnyLowering>(converter, patterns.getContext());
}
