//===- ExpandKeyClocks.cpp - The key ranges' clock, written out -----------===//
//
// smla.key_clock states the key-range work order of long contexts; this pass
// writes it out where it stands in its block loop (and a prologue before the
// loop for a CTA that runs no block): the ranges a block passes, counted on
// the clock with tile.counter_add, and a bounded tile.counter_wait for the
// round. Every value is formed inside the branches that use it, off the
// loop's registers, and the range of the block before is read back from the
// keys rather than carried.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace sparse_mla::smla {
#define GEN_PASS_DEF_SPARSEMLAEXPANDKEYCLOCKSPASS
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h.inc"
} // namespace sparse_mla::smla

using namespace mlir;
using namespace sparse_mla::tile;
using sparse_mla::smla::KeyClockOp;

namespace {

/// Reads of a counter before a wait gives up: a few hundred microseconds,
/// some ten blocks of a range's work.
constexpr int64_t kClockPolls = 256;

/// Builds the expansion of one smla.key_clock.
struct KeyClock {
  KeyClockOp op;
  scf::ForOp loop;
  Location loc;

  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(OpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }

  /// The CTA's place in launch order (x fastest, then y, then z), and the
  /// grid's CTAs.
  std::pair<Value, Value> launchOrder(OpBuilder &b) {
    Value linear, ctas;
    for (Dim d : {Dim::z, Dim::y, Dim::x}) {
      Value id = BlockIdOp::create(b, loc, b.getIndexType(), d);
      Value size = GridDimOp::create(b, loc, b.getIndexType(), d);
      linear = linear ? arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, linear, size), id)
                      : id;
      ctas = ctas ? arith::MulIOp::create(b, loc, ctas, size) : size;
    }
    return {linear, ctas};
  }

  /// CTAs of a round: round_ctas, at least 1.
  Value roundCtas(OpBuilder &b) { return arith::MaxUIOp::create(b, loc, op.getRoundCtas(), index(b, 1)); }

  /// This CTA's round: round_ctas CTAs in launch order.
  Value round(OpBuilder &b, Value linear) {
    return arith::DivUIOp::create(b, loc, linear, roundCtas(b));
  }

  /// Adds `amount` to clock[round, r] for r in [from, to).
  void pass(OpBuilder &b, Value round, Value from, Value to, Value amount) {
    auto each = scf::ForOp::create(b, loc, from, to, index(b, 1));
    OpBuilder body = OpBuilder::atBlockBegin(each.getBody());
    CounterAddOp::create(body, loc, op.getClock(), round, each.getInductionVar(), amount);
  }

  Value key(OpBuilder &b, Value slot) {
    return memref::LoadOp::create(b, loc, op.getKeys(), ValueRange{op.getRow(), slot});
  }

  /// The ranges of `keys`, at most `last`, step by step over all of them
  /// (the two keys' loads and arithmetic issue side by side).
  SmallVector<Value, 2> rangesOf(OpBuilder &b, SmallVector<Value, 2> keys, Value last) {
    for (Value &x : keys)
      x = arith::MaxSIOp::create(b, loc, x, i32(b, 0));
    // Ranges of 2^shift keys.
    Value range = arith::IndexCastOp::create(b, loc, b.getI32Type(), op.getRange());
    Value shift = math::CountTrailingZerosOp::create(b, loc, range);
    for (Value &x : keys)
      x = arith::ShRUIOp::create(b, loc, x, shift);
    for (Value &x : keys)
      x = arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
    for (Value &x : keys)
      x = arith::MinUIOp::create(b, loc, x, last);
    return keys;
  }

  void expand() {
    OpBuilder b(loop);
    Value clock = op.getClock();
    Value ranges = memref::DimOp::create(b, loc, clock, 1);
    Value clocked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, ranges, index(b, 0));
    Value n = loop.getUpperBound(), step = loop.getStep(), j = loop.getInductionVar();
    // A CTA without blocks passes every range at once.
    Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n, index(b, 0));
    auto passAll = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, clocked, none),
                                     /*withElseRegion=*/false);
    {
      OpBuilder t = passAll.getThenBodyBuilder();
      pass(t, round(t, launchOrder(t).first), index(t, 0), ranges, i32(t, 1));
    }

    b.setInsertionPoint(op);
    auto ifClocked = scf::IfOp::create(b, loc, clocked, /*withElseRegion=*/false);
    OpBuilder t = ifClocked.getThenBodyBuilder();
    Value last = arith::SubIOp::create(t, loc, ranges, index(t, 1));
    Value first = key(t, j);
    Value atStart = arith::CmpIOp::create(t, loc, arith::CmpIPredicate::eq, j, index(t, 0));
    Value before = arith::SubIOp::create(t, loc, arith::MaxUIOp::create(t, loc, j, step), step);
    SmallVector<Value, 2> r2 = rangesOf(t, {first, key(t, before)}, last);
    Value to = r2[0];
    Value from = arith::SelectOp::create(t, loc, atStart, index(t, 0), r2[1]);
    // The last block passes every range after its own.
    Value next = arith::AddIOp::create(t, loc, j, step);
    Value lastBlock = arith::CmpIOp::create(t, loc, arith::CmpIPredicate::uge, next, n);
    Value upto = arith::SelectOp::create(t, loc, lastBlock, ranges, to);
    Value moved = arith::CmpIOp::create(t, loc, arith::CmpIPredicate::ugt, upto, from);
    auto ifMoved = scf::IfOp::create(t, loc, moved, /*withElseRegion=*/false);
    OpBuilder m = ifMoved.getThenBodyBuilder();
    auto [linear, ctas] = launchOrder(m);
    Value r = round(m, linear);
    // The round's CTAs: round_ctas, or what is left for the last round.
    Value perRound = roundCtas(m);
    Value firstCta = arith::MulIOp::create(m, loc, r, perRound);
    Value left = arith::SubIOp::create(m, loc, ctas, firstCta);
    Value size = arith::IndexCastOp::create(
        m, loc, m.getI32Type(), arith::MinUIOp::create(m, loc, perRound, left));
    pass(m, r, from, upto, i32(m, 1));
    Value window = arith::IndexCastOp::create(m, loc, m.getIndexType(), op.getWindow());
    Value ahead = arith::CmpIOp::create(m, loc, arith::CmpIPredicate::ugt, to, window);
    auto ifAhead = scf::IfOp::create(m, loc, ahead, /*withElseRegion=*/false);
    OpBuilder a = ifAhead.getThenBodyBuilder();
    Value passed =
        arith::SubIOp::create(a, loc, arith::SubIOp::create(a, loc, to, window), index(a, 1));
    Value reached = CounterWaitOp::create(a, loc, a.getI1Type(), clock, r, passed, size,
                                           i32(a, kClockPolls));
    // A round that does not keep time (a CTA of it not resident, as when
    // another kernel holds SMs) stops its clock: its counters jump past
    // every later wait.
    Value late = arith::XOrIOp::create(
        a, loc, reached, arith::ConstantIntOp::create(a, loc, a.getI1Type(), 1));
    auto ifLate = scf::IfOp::create(a, loc, late, /*withElseRegion=*/false);
    OpBuilder l = ifLate.getThenBodyBuilder();
    pass(l, r, passed, ranges, size);
    op.erase();
  }
};

struct SparseMLAExpandKeyClocksPass
    : public sparse_mla::smla::impl::SparseMLAExpandKeyClocksPassBase<
          SparseMLAExpandKeyClocksPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<KeyClockOp> clocks;
    getOperation().walk([&](KeyClockOp op) { clocks.push_back(op); });
    for (KeyClockOp op : clocks)
      KeyClock{op, cast<scf::ForOp>(op->getParentOp()), op.getLoc()}.expand();
  }
};

} // namespace
