//===- PipelineLoops.cpp - Copies of iteration i+S-1 during iteration i ---===//
//
// The prefetch slice of a tile.pipelined_for is its top-level asynchronous
// copies plus the side-effect-free ops (and bounded loads) their operands
// come from; it may depend on the induction variable but not on iter_args.
// The slice is cloned ahead of the compute, the body keeps everything else.
// The slice's loads (the gather's row indices) run one iteration further
// ahead and reach their copies through iter_args, so the copies never wait
// for a global load.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/SharedMemoryPlan.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEPIPELINELOOPSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

static bool isCopy(Operation *op) { return isa<AsyncCopyOp, GatherRowsOp>(op); }

/// What `op` reads: its operands and the values its regions (a tile.map's
/// body) use from above, which a clone needs as much.
static SmallVector<Value> inputsOf(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  llvm::SetVector<Value> captured;
  for (Region &r : op->getRegions())
    getUsedValuesDefinedAbove(r, captured);
  llvm::append_range(inputs, captured);
  return inputs;
}

/// A ring of `stages` buffers of type `buffer` (its layout: the default).
static SmemTileType ringType(SmemTileType buffer, int64_t stages) {
  SmallVector<int64_t> shape{stages};
  llvm::append_range(shape, buffer.getShape());
  return SmemTileType::get(shape, buffer.getElementType());
}

static Value destOf(Operation *copy) {
  if (auto c = dyn_cast<AsyncCopyOp>(copy))
    return c.getDest();
  return cast<GatherRowsOp>(copy).getDest();
}

struct Pipeliner {
  PipelinedForOp loop;
  Block &body;
  int64_t stages;
  SmallVector<Operation *> copies;
  llvm::SetVector<Operation *> slice; // in program order
  SmallVector<Value> buffers;         // distinct copy destinations
  SmallVector<LoadOp> loads;          // the slice's loads, in program order

  explicit Pipeliner(PipelinedForOp loop)
      : loop(loop), body(loop.getBody().front()), stages(loop.getStages()) {}

  LogicalResult analyze() {
    for (Operation &op : body.without_terminator())
      if (isCopy(&op))
        copies.push_back(&op);
    llvm::SetVector<Operation *> needed;
    SmallVector<Value> worklist;
    for (Operation *c : copies)
      for (Value v : c->getOperands())
        worklist.push_back(v);
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == &body && arg.getArgNumber() > 0)
          return loop.emitOpError("copies depend on iter_arg #")
                 << arg.getArgNumber() - 1 << "; they cannot run ahead";
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def->getBlock() != &body || needed.contains(def))
        continue;
      if (auto load = dyn_cast<LoadOp>(def)) {
        if (load.getBounds().empty())
          return load.emitOpError("feeds a pipelined copy and so also runs for "
                                  "iterations past the end: it needs bounds");
      } else if (!isMemoryEffectFree(def) || (def->getNumRegions() && !isa<MapOp>(def))) {
        return def->emitOpError("feeds a pipelined copy but has side effects");
      }
      needed.insert(def);
      llvm::append_range(worklist, inputsOf(def));
    }
    for (Operation &op : body.without_terminator())
      if (needed.contains(&op) || isCopy(&op)) {
        slice.insert(&op);
        if (auto load = dyn_cast<LoadOp>(op))
          loads.push_back(load);
      }
    for (Operation *c : copies) {
      Value dst = destOf(c);
      if (!dst.getDefiningOp<AllocOp>() ||
          loop->isAncestor(dst.getDefiningOp()))
        return c->emitOpError("in a pipelined loop must copy into a tile.alloc "
                              "made before the loop");
      if (!llvm::is_contained(buffers, dst))
        buffers.push_back(dst);
    }
    return success();
  }

  /// Clones the slice's loads, and the ops they need, for induction value
  /// `iv`: the values its copies for `iv` will use.
  SmallVector<Value> loadAhead(OpBuilder &b, Value iv, IRMapping *into = nullptr) {
    IRMapping local;
    IRMapping &map = into ? *into : local;
    map.map(loop.getInductionVar(), iv);
    llvm::SetVector<Operation *> needed;
    SmallVector<Operation *> worklist(loads.begin(), loads.end());
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!needed.insert(op))
        continue;
      for (Value v : inputsOf(op))
        if (Operation *def = v.getDefiningOp(); def && def->getBlock() == &body)
          worklist.push_back(def);
    }
    SmallVector<Value> values;
    for (Operation *op : slice)
      if (needed.contains(op))
        b.clone(*op, map);
    for (LoadOp load : loads)
      values.push_back(map.lookup(load.getResult()));
    return values;
  }

  /// Clones the prefetch slice for induction value `iv`; copies write into
  /// `dest(buffer)` and are masked when `inRange` is false. The slice's loads
  /// are not cloned: `loaded` holds their values for `iv`.
  void issue(OpBuilder &b, Value iv, Value inRange, ValueRange loaded,
             function_ref<Value(Value)> dest) {
    Location loc = loop.getLoc();
    IRMapping map;
    map.map(loop.getInductionVar(), iv);
    for (auto [load, value] : llvm::zip(loads, loaded))
      map.map(load.getResult(), value);
    for (Operation *op : slice) {
      if (isa<LoadOp>(op))
        continue;
      if (!isCopy(op)) {
        b.clone(*op, map);
        continue;
      }
      Value dst = dest(destOf(op));
      Operation *copy = b.clone(*op, map);
      if (auto gather = dyn_cast<GatherRowsOp>(copy)) {
        gather.getDestMutable().assign(dst);
        // Past the end: every row index becomes -1, so nothing is read.
        b.setInsertionPoint(gather);
        gather.getRowsMutable().assign(keepRowsIf(b, loc, gather.getRows(), inRange));
        b.setInsertionPointAfter(gather);
      } else {
        auto ac = cast<AsyncCopyOp>(copy);
        ac.getDestMutable().assign(dst);
        b.setInsertionPoint(ac);
        Value bound = ac.getBound();
        if (!bound)
          bound = arith::ConstantIndexOp::create(b, loc,
                                                 std::numeric_limits<int32_t>::max());
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        ac.getBoundMutable().assign(arith::SelectOp::create(b, loc, inRange, bound, zero));
        b.setInsertionPointAfter(ac);
      }
    }
  }

  /// The most stages (up to the loop's) for which the kernel's shared plan,
  /// with this loop's buffers as rings, fits in `limit`.
  void fitStages(int64_t limit) {
    auto kernel = loop->getParentOfType<KernelOp>();
    auto withRings = [&](AllocOp alloc) {
      auto type = cast<SmemTileType>(alloc.getType());
      return llvm::is_contained(buffers, alloc.getResult()) ? ringType(type, stages) : type;
    };
    while (stages > 1 && planSharedMemory(kernel, {}, withRings).bytes > limit)
      --stages;
  }

  LogicalResult rewrite() {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(), step = loop.getStep();
    auto cIdx = [&](OpBuilder &bb, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(bb, loc, v);
    };
    auto ivAhead = [&](OpBuilder &bb, Value iv, int64_t d) -> Value {
      if (d == 0)
        return iv;
      return arith::AddIOp::create(
          bb, loc, iv, arith::MulIOp::create(bb, loc, step, cIdx(bb, d)));
    };
    auto below = [&](OpBuilder &bb, Value iv) -> Value {
      return arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt, iv, ub);
    };

    // Rings of `stages` buffers.
    DenseMap<Value, Value> rings;
    if (stages > 1)
      for (Value buf : buffers) {
        OpBuilder ab(buf.getDefiningOp());
        rings[buf] = AllocOp::create(
            ab, loc, ringType(cast<SmemTileType>(buf.getType()), stages), IntegerAttr());
      }
    auto stageOf = [&](OpBuilder &bb, Value buf, Value stage) -> Value {
      if (stages == 1)
        return buf;
      auto type = cast<SmemTileType>(buf.getType());
      Value zero = cIdx(bb, 0);
      return SliceOp::create(bb, loc, type, rings[buf], ValueRange{stage, zero, zero});
    };

    // Prologue: iterations 0 .. S-2 (just 0 with one stage), then the loads
    // for the first copies the loop issues.
    int64_t ahead = std::max<int64_t>(stages - 1, 1);
    for (int64_t d = 0; d < ahead; ++d) {
      Value iv = ivAhead(b, lb, d);
      Value stage = cIdx(b, d);
      issue(b, iv, below(b, iv), loadAhead(b, iv),
            [&](Value buf) { return stageOf(b, buf, stage); });
    }
    SmallVector<Value> inits(loop.getInitArgs());
    llvm::append_range(inits, loadAhead(b, ivAhead(b, lb, ahead)));

    auto forOp = scf::ForOp::create(b, loc, lb, ub, step, inits);
    unsigned numCarried = loop.getInitArgs().size();
    ValueRange loaded = forOp.getRegionIterArgs().drop_front(numCarried);
    SmallVector<Value> nextLoads;
    Block *newBody = forOp.getBody();
    if (!newBody->empty())
      newBody->getTerminator()->erase(); // the implicit yield: ours follows
    OpBuilder fb = OpBuilder::atBlockBegin(newBody);
    Value iv = forOp.getInductionVar();
    Value k = arith::DivUIOp::create(fb, loc, arith::SubIOp::create(fb, loc, iv, lb), step);
    Value stage = stages > 1 ? arith::RemUIOp::create(fb, loc, k, cIdx(fb, stages)).getResult()
                             : Value();
    // The body's own copies of the slice's loads go first: they already run
    // ahead for the copies, and here their latency hides behind the wait.
    IRMapping map;
    loadAhead(fb, iv, &map);
    int64_t perIteration = copies.size();
    AsyncWaitOp::create(fb, loc, stages > 1 ? (stages - 2) * perIteration : 0);
    BarrierOp::create(fb, loc);
    if (stages > 1) {
      Value next = arith::RemUIOp::create(
          fb, loc, arith::AddIOp::create(fb, loc, k, cIdx(fb, stages - 1)),
          cIdx(fb, stages));
      Value at = ivAhead(fb, iv, ahead);
      issue(fb, at, below(fb, at), loaded, [&](Value buf) { return stageOf(fb, buf, next); });
      nextLoads = loadAhead(fb, ivAhead(fb, iv, ahead + 1));
    }

    for (auto [from, to] : llvm::zip(loop.getRegionIterArgs(), forOp.getRegionIterArgs()))
      map.map(from, to);
    if (stages > 1)
      for (Value buf : buffers)
        map.map(buf, stageOf(fb, buf, stage));

    // With one stage, the next copies start after the last use of a buffer.
    Operation *lastUse = nullptr;
    if (stages == 1) {
      llvm::SetVector<Value> aliases(buffers.begin(), buffers.end());
      for (Operation &op : body.without_terminator()) {
        if (isCopy(&op))
          continue;
        bool uses = false;
        op.walk([&](Operation *inner) {
          for (Value v : inner->getOperands())
            uses |= aliases.contains(v);
          if (auto s = dyn_cast<SliceOp>(inner); s && aliases.contains(s.getSource()))
            aliases.insert(s.getResult());
        });
        if (uses)
          lastUse = &op;
      }
    }
    for (Operation &op : body.without_terminator()) {
      if (isCopy(&op))
        continue;
      if (auto wait = dyn_cast<WaitOp>(op);
          wait && llvm::all_of(wait.getTokens(), [&](Value t) {
            return isCopy(t.getDefiningOp());
          }))
        continue;
      if (op.getNumResults() && map.contains(op.getResult(0)))
        continue; // hoisted with the loads
      fb.clone(op, map);
      if (&op == lastUse) {
        BarrierOp::create(fb, loc);
        Value at = ivAhead(fb, iv, 1);
        issue(fb, at, below(fb, at), loaded, [](Value buf) { return buf; });
        nextLoads = loadAhead(fb, ivAhead(fb, iv, 2));
      }
    }
    if (stages == 1 && !lastUse) {
      Value at = ivAhead(fb, iv, 1);
      issue(fb, at, below(fb, at), loaded, [](Value buf) { return buf; });
      nextLoads = loadAhead(fb, ivAhead(fb, iv, 2));
    }
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> yielded;
    for (Value v : yield.getValues())
      yielded.push_back(map.lookupOrDefault(v));
    llvm::append_range(yielded, nextLoads);
    scf::YieldOp::create(fb, loc, yielded);

    b.setInsertionPointAfter(forOp);
    AsyncWaitOp::create(b, loc, 0);
    loop.replaceAllUsesWith(forOp.getResults().take_front(numCarried));
    loop.erase();
    for (Value buf : buffers)
      if (buf.use_empty())
        buf.getDefiningOp()->erase();
    return success();
  }
};

struct TilePipelineLoopsPass
    : public sparse_mla::tile::impl::TilePipelineLoopsPassBase<TilePipelineLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(requireSpecialized(getOperation())))
      return signalPassFailure();
    SmallVector<PipelinedForOp> loops;
    getOperation().walk([&](PipelinedForOp loop) { loops.push_back(loop); });
    for (PipelinedForOp loop : loops) {
      Pipeliner p(loop);
      if (failed(p.analyze()))
        return signalPassFailure();
      p.fitStages(limit);
      if (failed(p.rewrite()))
        return signalPassFailure();
    }
  }
};

} // namespace
