//===- CountersToNVVM.cpp - Progress counters between CTAs ----------------===//
//
// tile.counter_add is one relaxed `red.global.add` per warpgroup, by its
// first thread (found where the op stands); tile.counter_wait reads the
// counter with volatile loads (never served by L1), a warp vote between
// reads and a nanosleep, for a bounded number of reads.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Pause between two reads of a counter that has not reached its target: the
/// waits it serves are a few microseconds, its reads go to L2.
constexpr int32_t kPollNanoseconds = 256;

/// Whether this is the first thread of its warpgroup, from %tid.x read here
/// by an asm, which LLVM does not hoist out of the branch it stands in.
/// Formed from gpu.thread_id, the test is loop-invariant: LLVM hoists it out
/// of the block loop whose (rarely taken) key-clock branches hold the adds,
/// and the loop then holds a predicate throughout (Hopper has 7). In the
/// backward's dqk = 512, hp = 64 variant that predicate cost warpgroup 1,
/// at its register limit, an 8-byte spill (bench/NOTES.md).
static Value firstInWarpgroupHere(OpBuilder &b, Location loc) {
  Value tid = LLVM::InlineAsmOp::create(b, loc, TypeRange{b.getI32Type()}, ValueRange{},
                                        "mov.u32 $0, %tid.x;", "=r",
                                        /*has_side_effects=*/false, /*is_align_stack=*/false,
                                        LLVM::TailCallKind::None, LLVM::AsmDialectAttr{},
                                        ArrayAttr{})
                  .getResult(0);
  Value inWarpgroup =
      arith::RemUIOp::create(b, loc, tid, i32Const(b, loc, hopper::kWarpgroupThreads));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, inWarpgroup,
                               i32Const(b, loc, 0));
}

/// Pointer (!llvm.ptr<1>) to element [row, col] of a 2-D i32 memref.
static Value counterPointer(OpBuilder &b, Location loc, Value memref, Value row, Value col) {
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, row), rowPitch(b, loc, memref)),
      toI64(b, loc, col));
  Value base = globalBasePointer(b, loc, memref);
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI32Type(), base, ValueRange{linear});
}

struct CounterAddLowering : public OpConversionPattern<CounterAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CounterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ifThen(rewriter, loc, firstInWarpgroupHere(rewriter, loc), [&](OpBuilder &b) {
      emitPtx(b, loc,
              {counterPointer(b, loc, adaptor.getCounter(), adaptor.getRow(), adaptor.getCol()),
               adaptor.getAmount()},
              "red.relaxed.gpu.global.add.s32 [$0], $1;", "l,r");
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct CounterWaitLowering : public OpConversionPattern<CounterWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CounterWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i1 = rewriter.getI1Type(), i32 = rewriter.getI32Type();
    Value ptr = counterPointer(rewriter, loc, adaptor.getCounter(), adaptor.getRow(),
                               adaptor.getCol());
    Value target = adaptor.getTarget();
    // Whether any lane of the warp read a value at the target: the warp
    // leaves together.
    auto reached = [&](OpBuilder &b) -> Value {
      Value v = LLVM::LoadOp::create(b, loc, i32, ptr, /*alignment=*/4, /*isVolatile=*/true);
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, target);
      return NVVM::VoteSyncOp::create(b, loc, i1, i32Const(b, loc, -1), ok,
                                      NVVM::VoteSyncKind::any);
    };
    Value zero = i32Const(rewriter, loc, 0);
    auto loop = scf::WhileOp::create(
        rewriter, loc, TypeRange{i32, i1}, ValueRange{zero, reached(rewriter)},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value more = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, args[0],
                                             adaptor.getPolls());
          Value notYet = arith::XOrIOp::create(
              b, l, args[1], arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
          scf::ConditionOp::create(b, l, arith::AndIOp::create(b, l, more, notYet), args);
        },
        [&](OpBuilder &b, Location l, ValueRange args) {
          NVVM::NanosleepOp::create(b, l, i32Const(b, l, kPollNanoseconds));
          Value next = arith::AddIOp::create(b, l, args[0], i32Const(b, l, 1));
          scf::YieldOp::create(b, l, ValueRange{next, reached(b)});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateCountersToNVVMPatterns(TileTypeConverter &converter,
                                                      RewritePatternSet &patterns) {
  patterns.add<CounterAddLowering, CounterWaitLowering>(converter, patterns.getContext());
}
