//===- LowerChannels.cpp - Channels to rings, mbarriers and phases --------===//
//
// A tile.channel becomes its ring of buffers and a 1 x 2S tile of mbarriers
// (full[s], then free[s]), full expecting the producer partition's threads
// and free those of every partition that gets. Each partition counts its
// rounds of each side: one i32 counter, threaded through the scf.for and
// scf.if around that side's ops, whose value n at an op means slot n % S in
// phase (n / S) & 1:
//   put_enter: wait until free[s] completes the phase before (the first
//              round of a slot passes at once), then the slot's buffers;
//   put_exit:  arrive at full[s] (after the thread's copies with `after`);
//   get_enter: wait until full[s] completes the phase, then the buffers;
//   get_exit:  arrive at free[s].
// A producer that also gets takes each slot right after putting it (the
// verifier's rule), so it needs no free barrier: its next put follows its
// exit in program order, and free counts only the other partitions. Its get
// waits for the copies of its put on full[s]; a slot its threads wrote needs
// only the partition's named barrier (a CTA-wide mbarrier round trip in
// place of bar.sync costs the hand-over a few hundred cycles).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/SharedMemoryPlan.h"
#include "sparse-mla/Target/Hopper.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILELOWERCHANNELSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

enum class Side { Put, Get };

/// The side of a channel op; exits leave their slot.
static std::optional<Side> sideOf(Operation *op) {
  if (isa<PutEnterOp, PutExitOp>(op))
    return Side::Put;
  if (isa<GetEnterOp, GetExitOp>(op))
    return Side::Get;
  return std::nullopt;
}
static bool isExit(Operation *op) { return isa<PutExitOp, GetExitOp>(op); }

/// One channel being lowered: its ring, its barriers and its op's rounds.
struct Channel {
  ChannelOp op;
  int64_t stages;
  SmallVector<Value> rings; // one tile.alloc per buffer type
  Value bars;               // full[0..S), free[0..S)
  Location loc;
  unsigned producer = 0;    // the partition that puts
  bool othersGet = false;   // a partition besides the producer gets
  bool copied = false;      // a put_exit waits for copies (`after`)

  Value channel() { return op.getResult(); }
  bool mine(Operation *o, Side side) {
    return sideOf(o) == side && o->getOperand(0) == channel();
  }
  bool holds(Operation *o, Side side) {
    return o->walk([&](Operation *in) {
              return mine(in, side) ? WalkResult::interrupt() : WalkResult::advance();
            }).wasInterrupted();
  }

  /// Threads the counter of `side` through `block`, entered at round
  /// `round`; lowers each of the side's ops on the way. Returns the round
  /// after the block.
  FailureOr<Value> thread(Block &block, Value round, Side side) {
    for (Operation &o : llvm::make_early_inc_range(block)) {
      if (mine(&o, side)) {
        OpBuilder b(&o);
        lower(b, &o, round);
        if (isExit(&o)) {
          Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
          round = arith::AddIOp::create(b, loc, round, one);
        }
        o.erase();
        continue;
      }
      if (o.getNumRegions() == 0 || !holds(&o, side))
        continue;
      FailureOr<Value> after = failure();
      if (auto loop = dyn_cast<scf::ForOp>(o))
        after = threadLoop(loop, round, side);
      else if (auto branch = dyn_cast<scf::IfOp>(o))
        after = threadIf(branch, round, side);
      else
        o.emitOpError("holds channel ops; tile-lower-channels counts their rounds "
                      "through scf.for and scf.if only");
      if (failed(after))
        return failure();
      round = *after;
    }
    return round;
  }

  /// The loop carries the counter.
  FailureOr<Value> threadLoop(scf::ForOp loop, Value round, Side side) {
    Block *body = loop.getBody();
    Value arg = body->addArgument(round.getType(), loc);
    FailureOr<Value> end = thread(*body, arg, side);
    if (failed(end))
      return failure();
    Operation *yield = body->getTerminator();
    yield->insertOperands(yield->getNumOperands(), *end);
    IRRewriter rewriter(loop);
    SmallVector<Value> inits(loop.getInitArgs());
    inits.push_back(round);
    auto grown = scf::ForOp::create(rewriter, loop.getLoc(), loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep(), inits);
    grown->setAttrs(loop->getAttrDictionary());
    grown.getRegion().takeBody(loop.getRegion());
    rewriter.replaceOp(loop, grown.getResults().drop_back());
    return grown.getResults().back();
  }

  /// The branch yields the counter: each side's count after it.
  FailureOr<Value> threadIf(scf::IfOp branch, Value round, Side side) {
    IRRewriter rewriter(branch);
    SmallVector<Type> types(branch.getResultTypes());
    types.push_back(rewriter.getI32Type());
    auto grown = scf::IfOp::create(rewriter, branch.getLoc(), types, branch.getCondition(),
                                   /*addThenBlock=*/false, /*addElseBlock=*/false);
    grown.getThenRegion().takeBody(branch.getThenRegion());
    if (branch.getElseRegion().empty()) {
      rewriter.createBlock(&grown.getElseRegion());
      scf::YieldOp::create(rewriter, branch.getLoc());
    } else {
      grown.getElseRegion().takeBody(branch.getElseRegion());
    }
    for (Region *region : {&grown.getThenRegion(), &grown.getElseRegion()}) {
      Block &block = region->front();
      FailureOr<Value> end = thread(block, round, side);
      if (failed(end))
        return failure();
      Operation *yield = block.getTerminator();
      yield->insertOperands(yield->getNumOperands(), *end);
    }
    rewriter.replaceOp(branch, grown.getResults().drop_back());
    return grown.getResults().back();
  }

  /// The enter's wait and buffers, or the exit's arrival, at round `round`.
  void lower(OpBuilder &b, Operation *o, Value round) {
    Type i32 = b.getI32Type();
    auto i32Const = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); };
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    // Round n: slot n % S (full barrier s, free barrier S + s), phase
    // parity (n / S) & 1.
    auto slot = [&]() -> Value {
      if (stages == 1)
        return index(0);
      return arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                          arith::RemUIOp::create(b, loc, round, i32Const(stages)));
    };
    auto free = [&]() -> Value {
      if (stages == 1)
        return index(1);
      return arith::AddIOp::create(b, loc, slot(), index(stages));
    };
    auto parity = [&]() -> Value {
      Value lap = stages == 1 ? round : arith::DivUIOp::create(b, loc, round, i32Const(stages));
      return arith::AndIOp::create(b, loc, lap, i32Const(1));
    };
    auto buffers = [&] {
      SmallVector<Value> views(rings);
      if (stages == 1)
        return views;
      Value s = slot(), zero = index(0);
      for (Value &view : views) {
        auto ring = cast<SmemTileType>(view.getType());
        auto type = ring.cloneWith(ring.getShape().drop_front(), ring.getElementType());
        view = SliceOp::create(b, loc, type, view, ValueRange{s, zero, zero});
      }
      return views;
    };
    auto [partitions, r] = *getPartition(o);
    if (r == producer && isa<GetEnterOp, GetExitOp>(o)) {
      // The producer's own get: its exit is program order; a slot its
      // threads wrote needs its named barrier, a copied one the full wait.
      if (isa<GetExitOp>(o))
        return;
      if (!copied) {
        auto [first, count] = partitions.getPartitionWarpgroups(r);
        BarrierOp::create(b, loc,
                          b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq(first, first + count))));
        o->replaceAllUsesWith(buffers());
        return;
      }
    }
    if (isa<PutEnterOp>(o)) {
      if (!othersGet) {
        o->replaceAllUsesWith(buffers());
        return;
      }
      // The round before this one: for the first round of a slot, the
      // phase before the first, which counts as complete.
      Value before = arith::XOrIOp::create(b, loc, parity(), i32Const(1));
      MBarrierWaitOp::create(b, loc, bars, free(), before, /*for_writes=*/true);
      o->replaceAllUsesWith(buffers());
    } else if (isa<GetEnterOp>(o)) {
      MBarrierWaitOp::create(b, loc, bars, slot(), parity(), /*for_writes=*/false);
      o->replaceAllUsesWith(buffers());
    } else if (auto put = dyn_cast<PutExitOp>(o)) {
      MBarrierArriveOp::create(b, loc, bars, slot(), /*after_copies=*/!put.getCopies().empty(),
                               Value(), Value(), /*reads_only=*/false);
    } else {
      // The consumer only read the slot, its GEMMs waited for: no proxy
      // hand-over, no fence.
      MBarrierArriveOp::create(b, loc, bars, free(), /*after_copies=*/false, Value(), Value(),
                               /*reads_only=*/true);
    }
  }
};

/// The ring, the barriers and their counts where the channel stood; then
/// each side's ops in each partition.
static LogicalResult lowerChannel(ChannelOp op) {
  ChannelType type = op.getType();
  Channel ch{op, type.getStages(), {}, {}, op.getLoc()};
  // Who puts and gets (ChannelOp's verifier: one producer partition).
  WarpSpecializeOp partitions;
  llvm::SmallDenseSet<unsigned> getters;
  for (Operation *user : op.getResult().getUsers()) {
    auto [ws, r] = *getPartition(user);
    partitions = ws;
    if (isa<PutEnterOp>(user))
      ch.producer = r;
    if (isa<GetEnterOp>(user))
      getters.insert(r);
    if (auto put = dyn_cast<PutExitOp>(user))
      ch.copied |= !put.getCopies().empty();
  }
  if (!partitions) {
    op.erase();
    return success();
  }
  auto threads = [&](unsigned r) {
    return partitions.getPartitionWarpgroups(r).second * hopper::kWarpgroupThreads;
  };
  int64_t producers = threads(ch.producer), consumers = 0;
  for (unsigned r : getters)
    if (r != ch.producer)
      consumers += threads(r);
  ch.othersGet = consumers > 0;

  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t s = ch.stages;
  // Without other consumers there are no free barriers.
  SmallVector<SmemTileType> tiles = type.getRingTiles(/*freeBarriers=*/ch.othersGet);
  for (SmemTileType ring : ArrayRef(tiles).drop_back())
    ch.rings.push_back(AllocOp::create(b, loc, ring, IntegerAttr()));
  ch.bars = AllocOp::create(b, loc, tiles.back(), IntegerAttr());
  SmallVector<Value> counts;
  if (producers == consumers || !ch.othersGet) {
    counts.push_back(arith::ConstantIndexOp::create(b, loc, producers));
  } else {
    Value full = arith::ConstantIndexOp::create(b, loc, producers);
    Value free = arith::ConstantIndexOp::create(b, loc, consumers);
    counts.append(s, full);
    counts.append(s, free);
  }
  MBarrierInitOp::create(b, loc, ch.bars, counts);

  for (Side side : {Side::Put, Side::Get})
    for (Region &region : partitions.getPartitions()) {
      if (region.empty())
        continue;
      Block &block = region.front();
      if (llvm::none_of(block, [&](Operation &o) { return ch.holds(&o, side); }))
        continue;
      OpBuilder start = OpBuilder::atBlockBegin(&block);
      Value zero = arith::ConstantIntOp::create(start, loc, start.getI32Type(), 0);
      if (failed(ch.thread(block, zero, side)))
        return failure();
    }
  op.erase();
  return success();
}

/// Whether `a` and `b` hold the same integer on every path, where the
/// pairs of loop arguments in `assumed` do: equal constants, the same
/// operation of congruent operands, the same result of an scf.if whose
/// branches yield congruent values, and loop arguments (or results) whose
/// initial and yielded values are congruent. Round counters that count the
/// same rounds, of two channels or two sides, are such values.
static bool congruent(Value a, Value b, DenseSet<std::pair<Value, Value>> &assumed);

static bool congruentIterArgs(scf::ForOp loop, unsigned i, unsigned j,
                              DenseSet<std::pair<Value, Value>> &assumed) {
  Value ai = loop.getRegionIterArgs()[i], aj = loop.getRegionIterArgs()[j];
  if (!assumed.insert({ai, aj}).second)
    return true;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  return congruent(loop.getInitArgs()[i], loop.getInitArgs()[j], assumed) &&
         congruent(yield.getOperand(i), yield.getOperand(j), assumed);
}

static bool congruent(Value a, Value b, DenseSet<std::pair<Value, Value>> &assumed) {
  if (a == b || assumed.contains({a, b}))
    return true;
  if (a.getType() != b.getType() || !a.getType().isSignlessInteger())
    return false;
  APInt ca, cb;
  if (matchPattern(a, m_ConstantInt(&ca)) && matchPattern(b, m_ConstantInt(&cb)))
    return ca == cb;
  if (auto argA = dyn_cast<BlockArgument>(a)) {
    auto argB = dyn_cast<BlockArgument>(b);
    auto loop = dyn_cast<scf::ForOp>(argA.getOwner()->getParentOp());
    if (!argB || argA.getOwner() != argB.getOwner() || !loop || argA.getArgNumber() == 0 ||
        argB.getArgNumber() == 0)
      return false;
    return congruentIterArgs(loop, argA.getArgNumber() - 1, argB.getArgNumber() - 1, assumed);
  }
  auto resA = dyn_cast<OpResult>(a), resB = dyn_cast<OpResult>(b);
  if (!resA || !resB)
    return false;
  Operation *opA = resA.getOwner(), *opB = resB.getOwner();
  if (opA == opB) {
    unsigned i = resA.getResultNumber(), j = resB.getResultNumber();
    if (auto loop = dyn_cast<scf::ForOp>(opA))
      return congruentIterArgs(loop, i, j, assumed);
    if (auto branch = dyn_cast<scf::IfOp>(opA))
      return congruent(branch.thenYield().getOperand(i), branch.thenYield().getOperand(j),
                       assumed) &&
             congruent(branch.elseYield().getOperand(i), branch.elseYield().getOperand(j),
                       assumed);
    return false;
  }
  if (opA->getName() != opB->getName() || opA->getAttrDictionary() != opB->getAttrDictionary() ||
      opA->getNumOperands() != opB->getNumOperands() || opA->getNumRegions() ||
      !isPure(opA) || resA.getResultNumber() != resB.getResultNumber())
    return false;
  for (auto [x, y] : llvm::zip(opA->getOperands(), opB->getOperands()))
    if (!congruent(x, y, assumed))
      return false;
  return true;
}

/// Lets each loop carry one register for counters that count the same
/// rounds (a partition's channels and sides, and the kernel's own count of
/// its blocks): the later argument's uses move to the first; the dead
/// argument is left for canonicalization.
static void shareCounters(KernelOp kernel) {
  kernel.walk([](scf::ForOp loop) {
    unsigned n = loop.getNumRegionIterArgs();
    for (unsigned j = 0; j < n; ++j)
      for (unsigned i = 0; i < j; ++i) {
        DenseSet<std::pair<Value, Value>> assumed;
        if (!congruentIterArgs(loop, i, j, assumed))
          continue;
        loop.getRegionIterArgs()[j].replaceAllUsesWith(loop.getRegionIterArgs()[i]);
        loop.getResult(j).replaceAllUsesWith(loop.getResult(i));
        break;
      }
  });
}

struct TileLowerChannelsPass
    : public sparse_mla::tile::impl::TileLowerChannelsPassBase<TileLowerChannelsPass> {
  using Base::Base;

  /// The most stages `op` may get: the pass's `stages` where given, else
  /// those of the tile.warp_specialize its partitions run in (none: as
  /// typed).
  int64_t mostStages(ChannelOp op) {
    if (stages > 0)
      return stages;
    for (Operation *user : op->getUsers())
      if (auto ws = user->getParentOfType<WarpSpecializeOp>())
        if (std::optional<int64_t> n = ws.getStages())
          return *n;
    return op.getType().getStages();
  }

  /// Whether copies fill `op`'s slots (a put_exit waits for them): its
  /// depth hides their latency, so it gets stages first.
  static bool filledByCopies(ChannelOp op) {
    return llvm::any_of(op->getUsers(), [](Operation *user) {
      auto exit = dyn_cast<PutExitOp>(user);
      return exit && !exit.getCopies().empty();
    });
  }

  /// Each channel up to its most stages, one more at a time while the
  /// kernel's shared memory holds them: the rings filled by copies first,
  /// then the smallest rings (the memory buys the most stages).
  LogicalResult fitStages(KernelOp kernel, ArrayRef<ChannelOp> all) {
    SmallVector<std::pair<ChannelOp, int64_t>> channels;
    for (ChannelOp op : all)
      channels.push_back({op, mostStages(op)});
    auto withStages = [](ChannelOp op, int64_t n) {
      ChannelType type = op.getType();
      return ChannelType::get(type.getContext(), type.getBuffers(), n);
    };
    auto fits = [&] {
      SmallVector<SmemTileType> rings;
      for (auto [op, most] : channels)
        llvm::append_range(rings, op.getType().getRingTiles());
      return planSharedMemory(kernel, rings).bytes <= hopper::kSharedBytesPerCTA;
    };
    for (auto [op, most] : channels)
      op.getResult().setType(withStages(op, 1));
    llvm::stable_sort(channels, [](auto a, auto b) {
      bool ca = filledByCopies(a.first), cb = filledByCopies(b.first);
      if (ca != cb)
        return ca;
      return a.first.getType().getRingBytes().value_or(0) <
             b.first.getType().getRingBytes().value_or(0);
    });
    if (!fits())
      return kernel.emitError("tile-lower-channels: the kernel's channels do not fit the "
                              "shared memory with one stage each");
    int64_t most = 1;
    for (auto [op, n] : channels)
      most = std::max(most, n);
    for (int64_t n = 2; n <= most; ++n)
      for (auto [op, limit] : channels) {
        if (limit < n || op.getType().getStages() != n - 1)
          continue; // full already
        op.getResult().setType(withStages(op, n));
        if (!fits())
          op.getResult().setType(withStages(op, n - 1));
      }
    return success();
  }

  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (failed(requireSpecialized(kernel)))
      return signalPassFailure();
    SmallVector<ChannelOp> channels;
    kernel.walk([&](ChannelOp op) { channels.push_back(op); });
    if (!channels.empty() && failed(fitStages(kernel, channels)))
      return signalPassFailure();
    for (ChannelOp op : channels)
      if (failed(lowerChannel(op)))
        return signalPassFailure();
    if (!channels.empty())
      shareCounters(kernel);
  }
};

} // namespace
