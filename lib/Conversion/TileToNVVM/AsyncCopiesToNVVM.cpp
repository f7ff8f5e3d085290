//===- AsyncCopiesToNVVM.cpp - Copies and gathers to cp.async ------------===//
//
// Windows and gathered rows go to shared memory by 16-byte cp.async; masked
// rows become zero-filling copies of 0 bytes from a safe address, so
// invalid slots cost no traffic and never read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Warpgroups of the CTA that runs `op` (from its gpu.func's block size).
static int64_t warpgroupsOf(Operation *op) {
  auto func = op->getParentOfType<gpu::GPUFuncOp>();
  std::optional<ArrayRef<int32_t>> size =
      func ? func.getKnownBlockSize() : std::nullopt;
  return size && !size->empty()
             ? std::max<int64_t>(1, (*size)[0] / hopper::kWarpgroupThreads)
             : 1;
}

/// cp.async of 16-byte chunks into a shared tile; `source` gives, for each
/// chunk, the global pointer to read and whether to read it at all. A tile
/// of the CTA is copied by all its warpgroups, which split the chunks:
/// warpgroup w copies every W-th run of the coalesced layout, starting at
/// run w. A warpgroup's own tile (`shared` false) it copies alone.
static void emitAsyncCopy(
    ConversionPatternRewriter &rewriter, Location loc, Operation *op,
    SmemTileType dst, Value dstBase, BlockedLayoutAttr layout, bool shared,
    function_ref<std::pair<Value, Value>(OpBuilder &, const Run &)> source) {
  ThreadElements te = *getThreadElements(layout, dst.getShape());
  int64_t groups = shared ? warpgroupsOf(op) : 1;
  Value wg;
  if (groups > 1)
    wg = warpgroupIndex(rewriter, loc);
  SmallVector<Run> runs = runsOf(rewriter, loc, layout, te);
  for (auto [i, run] : llvm::enumerate(runs)) {
    Value mine;
    if (groups > 1)
      mine = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, wg,
                                   i32Const(rewriter, loc, i % groups));
    Value dstPtr =
        sharedRunPointer(rewriter, loc, dstBase, dst, run, layout, te.vector);
    ifThen(rewriter, loc, mine, [&](OpBuilder &b) {
      auto [ptr, valid] = source(b, run);
      Value size = arith::SelectOp::create(b, loc, valid, i32Const(b, loc, hopper::kAccessBytes),
                                           i32Const(b, loc, 0));
      NVVM::CpAsyncOp::create(b, loc, dstPtr, ptr, 16u,
                              NVVM::LoadCacheModifierKind::CG, size);
    });
  }
  NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
}

struct AsyncCopyLowering : public OpConversionPattern<AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dst = cast<SmemTileType>(op.getDest().getType());
    BlockedLayoutAttr layout = getCoalescedLayout(
        getContext(), dst.getShape(), getElementBytes(dst.getElementType()));
    if (!layout)
      return op.emitOpError("cannot spread ")
             << dst << " over " << hopper::kWarpgroupThreads << " threads";
    Type elt = dst.getElementType();
    SmallVector<Value> bounds;
    if (adaptor.getBound())
      bounds.push_back(adaptor.getBound());
    WindowAccess win(rewriter, loc, adaptor.getSource(), adaptor.getIndices(),
                     bounds, 2);
    emitAsyncCopy(rewriter, loc, op, dst, adaptor.getDest(), layout, /*shared=*/true,
                  [&](OpBuilder &b, const Run &run) -> std::pair<Value, Value> {
                    Value ptr = win.pointer(b, loc, elt, run.coords);
                    Value ok = win.inBounds(b, loc, run.coords);
                    if (!ok)
                      return {ptr, arith::ConstantIntOp::create(b, loc, 1, 1)};
                    // Masked rows read nothing; point them at the base anyway.
                    ptr = arith::SelectOp::create(b, loc, ok, ptr, win.base);
                    return {ptr, ok};
                  });
    rewriter.replaceOp(op, i32Const(rewriter, loc, 0));
    return success();
  }
};

struct GatherRowsLowering : public OpConversionPattern<GatherRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dst = cast<SmemTileType>(op.getDest().getType());
    auto rowsType = cast<RegTileType>(op.getRows().getType());
    ThreadElements rowsTe =
        *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    // The chunks are spread like the rows whose indices a thread holds.
    auto rowsLayout = dyn_cast<SliceLayoutAttr>(rowsType.getLayout());
    auto layout = rowsLayout ? dyn_cast<BlockedLayoutAttr>(rowsLayout.getParent())
                             : BlockedLayoutAttr();
    if (!layout || rowsLayout.getDim() != 1 ||
        layout.getVector() * getElementBytes(dst.getElementType()) != hopper::kAccessBytes)
      return op.emitOpError("row indices need the rows of a 16-byte blocked "
                            "layout (run tile-assign-layouts)");
    Type elt = dst.getElementType();
    Value base = globalBasePointer(rewriter, loc, adaptor.getSource());
    Value pitch = rowPitch(rewriter, loc, adaptor.getSource());
    Value column = toI32(rewriter, loc, adaptor.getColumn());
    emitAsyncCopy(
        rewriter, loc, op, dst, adaptor.getDest(), layout, !op.getPerWarpgroup(),
        [&](OpBuilder &b, const Run &run) -> std::pair<Value, Value> {
          Value row = vector::ExtractOp::create(
              b, loc, adaptor.getRows(), slicePosition(rowsTe, run.offsets[0]));
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              row, i32Const(b, loc, 0));
          Value safeRow =
              arith::SelectOp::create(b, loc, valid, row, i32Const(b, loc, 0));
          Value linear = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, safeRow), pitch),
              toI64(b, loc, arith::AddIOp::create(b, loc, column, run.coords[1])));
          Value ptr = LLVM::GEPOp::create(b, loc, base.getType(), elt, base,
                                          ValueRange{linear});
          return {ptr, valid};
        });
    rewriter.replaceOp(op, i32Const(rewriter, loc, 0));
    return success();
  }
};

struct AsyncWaitLowering : public OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncWaitGroupOp>(op, op.getPending());
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateAsyncCopiesToNVVMPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AsyncCopyLowering, GatherRowsLowering, AsyncWaitLowering>(converter, patterns.getContext());
}
