//===- BarriersToNVGPU.cpp - Barriers, mbarriers, votes, partitions -------===//
//
// tile.barrier is a CTA or named barrier behind a proxy fence (thread writes
// to shared memory are next read by wgmma); tile.any is a barrier reduction;
// the mbarrier ops are their PTX instructions on 32-bit shared addresses;
// tile.warp_specialize is one branch per warpgroup that first sets the
// warpgroup's register budget.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <map>

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
    Location loc = op.getLoc();
    NVVM::FenceProxyOp::create(
        rewriter, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    auto id = op->getAttrOfType<IntegerAttr>(kBarrierIdAttr);
    if (!op.getWarpgroups() || !id || id.getInt() == 0) {
      rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
      return success();
    }
    int64_t threads = op.getWarpgroups()->size() * hopper::kWarpgroupThreads;
    NVVM::BarrierOp::create(rewriter, loc, TypeRange{}, i32Const(rewriter, loc, id.getInt()),
                            i32Const(rewriter, loc, threads), NVVM::BarrierReductionAttr{},
                            Value());
    rewriter.eraseOp(op);
    return success();
  }
};

/// The 32-bit shared address of mbarrier `index` of a 1 x N tile at `bars`.
static Value mbarrierAddress(OpBuilder &b, Location loc, Value bars, Value index) {
  Value off = arith::MulIOp::create(b, loc, toI32(b, loc, index), i32Const(b, loc, 8));
  Value ptr = bytePointer(b, loc, bars, off);
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), ptr);
}

/// Thread 0 of the CTA initializes each barrier; the CTA barrier after it
/// makes them visible to every thread.
struct MBarrierInitLowering : public OpConversionPattern<MBarrierInitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierInitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t n = cast<SmemTileType>(op.getBars().getType()).getShape()[1];
    Value tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, tid,
                                        arith::ConstantIndexOp::create(rewriter, loc, 0));
    Value count = toI32(rewriter, loc, adaptor.getCount());
    ifThen(rewriter, loc, first, [&](OpBuilder &b) {
      for (int64_t i = 0; i < n; ++i)
        emitPtx(b, loc,
                {mbarrierAddress(b, loc, adaptor.getBars(),
                                 arith::ConstantIndexOp::create(b, loc, i)),
                 count},
                "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r");
    });
    emitPtx(rewriter, loc, {}, "fence.mbarrier_init.release.cluster;", "");
    gpu::BarrierOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierArriveLowering : public OpConversionPattern<MBarrierArriveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value addr = mbarrierAddress(rewriter, loc, adaptor.getBars(), adaptor.getIndex());
    if (op.getAfterCopies()) {
      emitPtx(rewriter, loc, {addr}, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r");
    } else if (Value tx = adaptor.getExpectTx()) {
      // Thread 0 of the warpgroup arrives with the transaction count.
      Value lead = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                         threadInWarpgroup(rewriter, loc), i32Const(rewriter, loc, 0));
      emitPtx(rewriter, loc, {arith::ExtUIOp::create(rewriter, loc, rewriter.getI32Type(), lead),
                              addr, toI32(rewriter, loc, tx)},
              "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n"
              "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], $2;\n"
              "@!p mbarrier.arrive.shared::cta.b64 _, [$1];\n}",
              "r,r,r");
    } else {
      emitPtx(rewriter, loc, {addr}, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r");
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierWaitLowering : public OpConversionPattern<MBarrierWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value addr = mbarrierAddress(rewriter, loc, adaptor.getBars(), adaptor.getIndex());
    // The label is local to the braces, so each wait may repeat it.
    emitPtx(rewriter, loc, {addr, adaptor.getParity()},
            "{\n.reg .pred done;\nwait_again:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
            "@!done bra wait_again;\n}",
            "r,r");
    rewriter.eraseOp(op);
    return success();
  }
};

/// One `if (warpgroup == w)` per region, which first moves the warpgroup's
/// register budget from the CTA's even share to its own.
struct WarpSpecializeLowering : public OpConversionPattern<WarpSpecializeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WarpSpecializeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> regs = op.getRegisters();
    // What every thread has at entry: the CTA's registers shared evenly
    // (the kernel runs one CTA per SM, nvvm.minctasm = 1), in ptxas's steps
    // of 8 and at most what one thread may address.
    int64_t even = hopper::kRegistersPerCTA / (regs.size() * hopper::kWarpgroupThreads);
    even = std::min(even / hopper::kSetMaxNRegStep * hopper::kSetMaxNRegStep,
                    hopper::kMaxRegistersPerThread);
    Value wg = warpgroupIndex(rewriter, loc);
    for (auto [w, region] : llvm::enumerate(op.getPartitions())) {
      Value mine = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, wg,
                                         i32Const(rewriter, loc, w));
      auto ifOp = scf::IfOp::create(rewriter, loc, mine, /*withElseRegion=*/false);
      Block *then = ifOp.thenBlock();
      rewriter.setInsertionPointToStart(then);
      if (regs[w] != even)
        emitPtx(rewriter, loc, {},
                std::string("setmaxnreg.") + (regs[w] > even ? "inc" : "dec") +
                    ".sync.aligned.u32 " + std::to_string(regs[w]) + ";",
                "");
      if (!region.empty())
        rewriter.inlineBlockBefore(&region.front(), then->getTerminator());
      rewriter.setInsertionPointAfter(ifOp);
    }
    rewriter.eraseOp(op);
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
  patterns.add<BarrierLowering, AnyLowering, MBarrierInitLowering, MBarrierArriveLowering,
               MBarrierWaitLowering, WarpSpecializeLowering>(converter, patterns.getContext());
}

void sparse_mla::tile::assignBarrierIds(Operation *root) {
  root->walk([&](KernelOp kernel) {
    // Warpgroup w alone: 1 + w (as warpgroupBarrier); the whole CTA: 0;
    // every other set: the next free id, in order of first appearance. With
    // at most 4 warpgroups that is 1 + 4 + 10 ids: always enough.
    int64_t n = kernel.getWarpgroups();
    std::map<SmallVector<int64_t>, int64_t> ids;
    int64_t next = 1 + n;
    Builder b(kernel.getContext());
    kernel.walk([&](BarrierOp op) {
      std::optional<ArrayRef<int64_t>> wgs = op.getWarpgroups();
      if (!wgs)
        return;
      int64_t id;
      if (static_cast<int64_t>(wgs->size()) == n)
        id = 0;
      else if (wgs->size() == 1)
        id = 1 + wgs->front();
      else if (auto it = ids.find(SmallVector<int64_t>(*wgs)); it != ids.end())
        id = it->second;
      else
        id = ids[SmallVector<int64_t>(*wgs)] = next++;
      assert(id < hopper::kNamedBarriers && "more barriers than a CTA has");
      op->setAttr(kBarrierIdAttr, b.getI64IntegerAttr(id));
    });
  });
}
