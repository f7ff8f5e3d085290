//===- BarriersToNVVM.cpp - Barriers, mbarriers, votes, partitions -------===//
//
// tile.barrier is a CTA or named barrier behind a proxy fence (thread writes
// to shared memory are next read by wgmma); tile.any is a barrier reduction;
// mbarriers are initialized and waited for with the NVVM ops, except a
// cluster kernel's waits, which acquire at cluster scope (inline PTX); the
// arrivals stay inline PTX on 32-bit shared addresses: the NVVM arrive ops
// define an unused 64-bit state and fold the address into the instruction,
// which made ptxas spill 16-40 B more in the dqk = 512, hp = 64 backward
// (bench/NOTES.md); a peer CTA's barrier is mapped into the cluster's window;
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

/// Thread 0 of the CTA initializes each barrier; the CTA barrier after it
/// makes them visible to every thread (the cluster barrier, in a cluster
/// kernel: a peer may arrive at them remotely).
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
    ValueRange counts = adaptor.getCounts();
    ifThen(rewriter, loc, first, [&](OpBuilder &b) {
      for (int64_t i = 0; i < n; ++i)
        NVVM::MBarrierInitOp::create(
            b, loc,
            mbarrierPointer(b, loc, adaptor.getBars(), arith::ConstantIndexOp::create(b, loc, i)),
            toI32(b, loc, counts[counts.size() == 1 ? 0 : i]), /*predicate=*/Value());
    });
    NVVM::FenceMbarrierInitOp::create(rewriter, loc);
    if (inClusterKernel(op))
      clusterBarrier(rewriter, loc);
    else
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
    if (Value cta = adaptor.getCta()) {
      // The thread's writes into the peer's tiles may next be read by its
      // wgmma; the release at cluster scope publishes them to its waiters.
      emitPtx(rewriter, loc, {}, "fence.proxy.async.shared::cluster;", "");
      emitPtx(rewriter, loc, {addr, toI32(rewriter, loc, cta)},
              "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, $0, $1;\n"
              "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}",
              "r,r");
    } else if (op.getAfterCopies()) {
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
      // The thread's shared-memory writes before it may next be read by
      // wgmma in a waiting warpgroup (the async proxy).
      if (!op.getReadsOnly())
        emitPtx(rewriter, loc, {}, "fence.proxy.async.shared::cta;", "");
      emitPtx(rewriter, loc, {addr}, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r");
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// How long a waiting thread may be suspended before it polls again (as
/// CUTLASS's pipelines): it wakes when the phase completes.
constexpr int64_t kWaitSuspendHintNs = 10000000;

struct MBarrierWaitLowering : public OpConversionPattern<MBarrierWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (inClusterKernel(op)) {
      // Arrivals may come from a peer CTA: acquire at its scope, which the
      // NVVM op cannot say. The label is local to the braces, so each wait
      // may repeat it.
      emitPtx(rewriter, loc,
              {mbarrierAddress(rewriter, loc, adaptor.getBars(), adaptor.getIndex()),
               adaptor.getParity()},
              "{\n.reg .pred done;\nwait_again:\n"
              "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [$0], $1;\n"
              "@!done bra wait_again;\n}",
              "r,r");
    } else {
      NVVM::MBarrierTryWaitParityOp::create(
          rewriter, loc, mbarrierPointer(rewriter, loc, adaptor.getBars(), adaptor.getIndex()),
          adaptor.getParity(), i32Const(rewriter, loc, kWaitSuspendHintNs));
    }
    // Copies that completed on the barrier (cp.async, generic proxy) may
    // next be read by this thread's wgmma (async proxy).
    if (!op.getForWrites())
      emitPtx(rewriter, loc, {}, "fence.proxy.async.shared::cta;", "");
    rewriter.eraseOp(op);
    return success();
  }
};

/// One `if (first <= warpgroup < first + count)` per region, which first
/// moves the partition's register budget from the CTA's even share to its own.
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
    auto [lastFirst, lastCount] = op.getPartitionWarpgroups(regs.size() - 1);
    int64_t warpgroups = lastFirst + lastCount; // the kernel's, by the verifier
    int64_t even = hopper::kRegistersPerCTA / (warpgroups * hopper::kWarpgroupThreads);
    even = std::min(even / hopper::kSetMaxNRegStep * hopper::kSetMaxNRegStep,
                    hopper::kMaxRegistersPerThread);
    Value wg = warpgroupIndex(rewriter, loc);
    for (auto [r, region] : llvm::enumerate(op.getPartitions())) {
      auto [first, count] = op.getPartitionWarpgroups(r);
      Value mine;
      if (count == 1) {
        mine = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, wg,
                                     i32Const(rewriter, loc, first));
      } else {
        Value rel = arith::SubIOp::create(rewriter, loc, wg, i32Const(rewriter, loc, first));
        mine = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, rel,
                                     i32Const(rewriter, loc, count));
      }
      auto ifOp = scf::IfOp::create(rewriter, loc, mine, /*withElseRegion=*/false);
      Block *then = ifOp.thenBlock();
      rewriter.setInsertionPointToStart(then);
      if (regs[r] != even)
        emitPtx(rewriter, loc, {},
                std::string("setmaxnreg.") + (regs[r] > even ? "inc" : "dec") +
                    ".sync.aligned.u32 " + std::to_string(regs[r]) + ";",
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
/// that run the op (the CTA's barrier 0, or the partition's named barrier)
/// and hands every one the result.
struct AnyLowering : public OpConversionPattern<AnyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AnyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value mine = vector::ReductionOp::create(rewriter, loc, vector::CombiningKind::OR,
                                             adaptor.getPred());
    Value mine32 = arith::ExtUIOp::create(rewriter, loc, i32, mine);
    Value any;
    if (auto attr = op->getAttrOfType<IntegerAttr>(kBarrierIdAttr); attr && attr.getInt()) {
      // A named barrier: NVVM reduces only on barrier 0, so inline PTX.
      int64_t threads = op->getAttrOfType<IntegerAttr>(kBarrierThreadsAttr).getInt();
      any = LLVM::InlineAsmOp::create(
                rewriter, loc, TypeRange{i32}, ValueRange{mine32},
                "{\n.reg .pred p, q;\nsetp.ne.b32 q, $1, 0;\nbar.red.or.pred p, " +
                    std::to_string(attr.getInt()) + ", " + std::to_string(threads) +
                    ", q;\nselp.u32 $0, 1, 0, p;\n}",
                "=r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
                LLVM::TailCallKind::None, LLVM::AsmDialectAttr{}, ArrayAttr{})
                .getResult(0);
    } else {
      any = NVVM::BarrierOp::create(
                rewriter, loc, TypeRange{i32}, Value(), Value(),
                NVVM::BarrierReductionAttr::get(getContext(), NVVM::BarrierReduction::OR),
                mine32)
                .getRes();
    }
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::ne, any,
                                               i32Const(rewriter, loc, 0));
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateBarriersToNVVMPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BarrierLowering, AnyLowering, MBarrierInitLowering, MBarrierArriveLowering,
               MBarrierWaitLowering, WarpSpecializeLowering>(converter, patterns.getContext());
}
