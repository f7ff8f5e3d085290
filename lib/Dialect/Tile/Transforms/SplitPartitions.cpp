//===- SplitPartitions.cpp - One body for every role, split by partition --===//
//
// A tile.warp_specialize written with one region for N partitions holds
// the code every role runs, a block loop say, once. Which partitions run
// an op follows from the `tile.partition` tags, as a set (a bit mask):
//   - an op runs where its tag, its operands (and the values its regions
//     capture) and the scf.for / scf.if around it are: a tagged op, and
//     whatever uses its results, runs in its partition only;
//   - a result of scf.for or scf.if exists where the values yielded for it
//     do (and its loop or branch runs);
//   - an op without a tag and without such operands runs in every
//     partition: the loop control, the channel gets, the block's key map.
// The sets only shrink from "all" (a greatest fixpoint over the loops).
// Each partition then gets a clone of the body without the ops that do not
// run in it; its loops and branches lose the results of other partitions,
// and what it does not use is erased as dead. A value that two partitions
// would need to meet in one op is an error: partitions hand data over
// through channels (tile.channel), not SSA values.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/Transforms/InsertChannels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILESPLITPARTITIONSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

using Mask = uint64_t;

/// Whether the ops in `op`'s regions are assigned one by one (scf.for and
/// scf.if are split); those of other ops go where the op goes.
static bool nested(Operation *op) {
  return isa<scf::ForOp, scf::IfOp>(op) || op->getNumRegions() == 0;
}

/// The partitions that run each op of the body and hold each value.
struct Assignment {
  Region *body;
  Mask all;
  DenseMap<Value, Mask> values;     // absent: defined outside, all
  DenseMap<Operation *, Mask> runs; // every op of the body but yields
  bool changed = false;

  Mask of(Value v) const {
    auto it = values.find(v);
    return it == values.end() ? all : it->second;
  }
  /// Records `m` for `key`; a new or changed entry calls for another sweep.
  template <typename Key>
  void update(DenseMap<Key, Mask> &masks, Key key, Mask m) {
    auto [it, inserted] = masks.try_emplace(key, m);
    changed |= inserted || it->second != m;
    it->second = m;
  }
  void set(Value v, Mask m) { update(values, v, m); }
  void setRuns(Operation *op, Mask m) { update(runs, op, m); }
  Mask tag(Operation *op) const {
    auto r = op->getAttrOfType<IntegerAttr>(kPartitionAttr);
    return r ? Mask(1) << r.getInt() : all;
  }
  /// The values an op and its regions take from outside it.
  Mask operands(Operation *op) const {
    Mask m = all;
    for (Value v : op->getOperands())
      m &= of(v);
    op->walk([&](Operation *in) {
      if (in != op)
        for (Value v : in->getOperands())
          if (!op->isAncestor(v.getParentBlock()->getParentOp()))
            m &= of(v);
    });
    return m;
  }

  /// One sweep over `block`, whose ops run at most where `context` does.
  void sweep(Block &block, Mask context) {
    for (Operation &op : block) {
      if (isa<scf::YieldOp>(op))
        continue;
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        Mask control = context & tag(&op) & of(loop.getLowerBound()) &
                       of(loop.getUpperBound()) & of(loop.getStep());
        setRuns(&op, control);
        set(loop.getInductionVar(), control);
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        for (auto [i, result] : llvm::enumerate(loop.getResults())) {
          Mask m = control & of(loop.getInitArgs()[i]) & of(yield.getOperand(i)) &
                   of(loop.getRegionIterArgs()[i]);
          set(loop.getRegionIterArgs()[i], m);
          set(result, m);
        }
        sweep(*loop.getBody(), control);
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        Mask control = context & tag(&op) & of(branch.getCondition());
        setRuns(&op, control);
        sweep(branch.getThenRegion().front(), control);
        if (!branch.getElseRegion().empty())
          sweep(branch.getElseRegion().front(), control);
        for (auto [i, result] : llvm::enumerate(branch.getResults()))
          set(result, control & of(branch.thenYield().getOperand(i)) &
                          of(branch.elseYield().getOperand(i)));
        continue;
      }
      Mask m = context & tag(&op) & operands(&op);
      setRuns(&op, m);
      for (Value result : op.getResults())
        set(result, m);
    }
  }

  /// The sets, or a diagnostic where values of two partitions meet.
  LogicalResult run() {
    do {
      changed = false;
      sweep(body->front(), all);
    } while (changed);
    WalkResult result = body->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::YieldOp>(op))
        return WalkResult::advance();
      if (runs.lookup(op) == 0) {
        op->emitOpError("runs in no partition: it takes values of different partitions, "
                        "or of another than its '")
            << kPartitionAttr << "' (partitions hand data over through a tile.channel)";
        return WalkResult::interrupt();
      }
      if (isa<scf::ForOp, scf::IfOp>(op))
        for (OpResult r : op->getResults())
          if (of(r) == 0) {
            op->emitOpError("yields values of different partitions as result #")
                << r.getResultNumber() << " (partitions hand data over through a tile.channel)";
            return WalkResult::interrupt();
          }
      return nested(op) ? WalkResult::advance() : WalkResult::skip();
    });
    return failure(result.wasInterrupted());
  }
};

/// The elements of `range` that `keep` keeps.
template <typename Range>
static auto keptOf(Range &&range, const BitVector &keep) {
  SmallVector<std::decay_t<decltype(*range.begin())>> kept;
  for (auto [i, x] : llvm::enumerate(range))
    if (keep[i])
      kept.push_back(x);
  return kept;
}

/// Moves the uses of `old`'s kept results to `now`'s, in order, and erases
/// `old`, whose other results nothing uses any more.
static void replaceKept(RewriterBase &rewriter, Operation *old, Operation *now,
                        const BitVector &keep) {
  SmallVector<Value> results(keptOf(ValueRange(old->getResults()), keep));
  rewriter.replaceAllUsesWith(results, now->getResults());
  rewriter.eraseOp(old);
}

/// `loop` without the results (and iteration arguments) not in `keep`.
static void dropResults(RewriterBase &rewriter, scf::ForOp loop, const BitVector &keep) {
  rewriter.setInsertionPoint(loop);
  auto kept = scf::ForOp::create(rewriter, loop.getLoc(), loop.getLowerBound(),
                                 loop.getUpperBound(), loop.getStep(),
                                 keptOf(loop.getInitArgs(), keep));
  kept->setAttrs(loop->getAttrDictionary());
  kept.getRegion().takeBody(loop.getRegion());
  BitVector args(kept.getBody()->getNumArguments(), false);
  for (unsigned i = 0; i < keep.size(); ++i)
    args[i + 1] = !keep[i];
  kept.getBody()->eraseArguments(args);
  replaceKept(rewriter, loop, kept, keep);
}

/// `branch` without the results not in `keep`.
static void dropResults(RewriterBase &rewriter, scf::IfOp branch, const BitVector &keep) {
  rewriter.setInsertionPoint(branch);
  auto kept = scf::IfOp::create(rewriter, branch.getLoc(), keptOf(branch.getResultTypes(), keep),
                                branch.getCondition(), /*addThenBlock=*/false,
                                /*addElseBlock=*/false);
  kept->setAttrs(branch->getAttrDictionary());
  kept.getThenRegion().takeBody(branch.getThenRegion());
  kept.getElseRegion().takeBody(branch.getElseRegion());
  replaceKept(rewriter, branch, kept, keep);
}

/// Removes, from every yield of `op`, the operands of the results not in
/// `keep`.
static void dropYielded(Operation *op, const BitVector &keep) {
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (auto yield = dyn_cast<scf::YieldOp>(block.getTerminator()))
        for (int i = keep.size() - 1; i >= 0; --i)
          if (!keep[i])
            yield->eraseOperand(i);
}

/// The values of an scf.for or scf.if that hold one type with its result
/// `i`: the result, what each region yields for it, and a loop's initial
/// value and iteration argument.
template <typename Add>
static void addTied(Operation *op, unsigned i, Add &&add) {
  add(op->getResult(i));
  for (Region &region : op->getRegions())
    for (Block &block : region)
      add(block.getTerminator()->getOperand(i));
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    add(loop.getInitArgs()[i]);
    add(loop.getRegionIterArgs()[i]);
  }
}

/// Gives partition `p`'s copy of a GEMM with `tile.partition_rows` (dim 0)
/// or `tile.partition_cols` (dim 1) its own share [s0, s1) of the result's
/// rows or columns: the slice of A's rows (B's columns) that computes them,
/// and the narrower type on every value that carries the result (the
/// accumulator and its splat, loop arguments and results, branch results,
/// elementwise maps, broadcasts of a vector along the shared dimension).
/// Where the share is stored, the store starts at s0: a transposed row
/// store of rows (they are dq's columns), a row scatter of
/// columns.
static LogicalResult narrowShare(GemmOp gemm, unsigned p, unsigned dim) {
  StringLiteral attr = dim == 0 ? kPartitionRowsAttr : kPartitionColsAttr;
  StringRef what = dim == 0 ? "rows" : "columns";
  ArrayRef<int64_t> starts = gemm->getAttrOfType<DenseI64ArrayAttr>(attr).asArrayRef();
  auto full = cast<RegTileType>(gemm.getType());
  int64_t size = full.getShape()[dim];
  if (ShapedType::isDynamic(size) || !full.getSymbols().empty())
    return gemm.emitOpError("shares its ") << what << " between partitions: its shape must be "
                                              "known (run tile-split-partitions after "
                                              "tile-specialize)";
  int64_t s0 = starts[p], s1 = p + 1 < starts.size() ? starts[p + 1] : size;
  int64_t step = dim == 0 ? hopper::kWgmmaM : hopper::kWgmmaNStep;
  if (s1 > size || (s1 - s0) % step)
    return gemm.emitOpError("gives partition #")
           << p << " " << what << " [" << s0 << ", " << s1 << ") of " << size
           << ": each share is a multiple of " << step << " " << what << " within them";
  // Rows come from A (its columns when transposed), columns from B (its
  // rows when transposed).
  Value source = dim == 0 ? gemm.getA() : gemm.getB();
  auto tile = dyn_cast<SmemTileType>(source.getType());
  if (!tile)
    return gemm.emitOpError("shares its ") << what << " between partitions: the operand that "
                                              "computes them must be a shared tile";
  bool transposed = dim == 0 ? gemm.getTransposeA() : !gemm.getTransposeB();
  gemm->removeAttr(attr);
  Operation *partitions = gemm->getParentOfType<WarpSpecializeOp>();
  // The values that carry the share, and the stores of it.
  SetVector<Value> carried;
  SmallVector<Operation *> stores;
  SmallVector<Value> work;
  auto add = [&](Value v) {
    if (carried.insert(v))
      work.push_back(v);
  };
  add(gemm.getResult());
  add(gemm.getAcc());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!partitions->isAncestor(v.getParentBlock()->getParentOp()))
      return gemm.emitOpError("shares its ") << what << ", but a value that carries them is "
                                                "defined outside tile.warp_specialize";
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg.getArgNumber() == 0)
        return gemm.emitOpError("shares its ") << what << " between partitions, but they flow "
                                                  "into a block argument it cannot narrow";
      addTied(loop, arg.getArgNumber() - 1, add);
    } else {
      Operation *def = v.getDefiningOp();
      if (isa<scf::ForOp, scf::IfOp>(def)) {
        addTied(def, cast<OpResult>(v).getResultNumber(), add);
      } else if (auto map = dyn_cast<MapOp>(def)) {
        for (Value x : map->getOperands())
          add(x);
      } else if (auto bcast = dyn_cast<BroadcastOp>(def);
                 bcast && bcast.getDim() == static_cast<int64_t>(dim)) {
        // The same vector in every row (column) of the share: its source
        // is whole in each partition.
      } else if (def != gemm.getOperation() && !isa<SplatOp>(def)) {
        return def->emitOpError("computes ") << what << " that a tile.gemm shares between "
                                                "partitions; only splats, broadcasts along "
                                             << what << ", maps, loops and branches may carry them";
      }
    }
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<scf::YieldOp>(user)) {
        addTied(user->getParentOp(), use.getOperandNumber(), add);
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        addTied(loop, use.getOperandNumber() - loop.getNumControlOperands(), add);
      } else if (auto map = dyn_cast<MapOp>(user)) {
        add(map.getResult());
      } else if (auto store = dyn_cast<StoreRowsOp>(user);
                 dim == 0 && store && store.getTranspose() && use.getOperandNumber() == 0) {
        stores.push_back(store);
      } else if (auto scatter = dyn_cast<ScatterAddRowsOp>(user);
                 dim == 1 && scatter && use.getOperandNumber() == 0) {
        stores.push_back(scatter);
      } else if (user != gemm.getOperation()) {
        return user->emitOpError("uses ")
               << what << " that a tile.gemm shares between partitions; only maps, loops, "
               << "branches and " << (dim == 0 ? "transposed row stores" : "row scatters")
               << " may";
      }
    }
  }
  for (Value v : carried) {
    auto type = cast<RegTileType>(v.getType());
    if (type.getShape()[dim] != size)
      return gemm.emitOpError("shares its ") << size << " " << what << ", but they reach a "
                                             << type;
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = s1 - s0;
    v.setType(type.cloneWith(shape, type.getElementType()));
  }
  OpBuilder b(gemm);
  Location loc = gemm.getLoc();
  Value first = arith::ConstantIndexOp::create(b, loc, s0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  unsigned sliced = transposed ? 1 : 0;
  SmallVector<int64_t> shape(tile.getShape());
  shape[sliced] = s1 - s0;
  SmallVector<Value> at{zero, zero};
  at[sliced] = first;
  Value slice = SliceOp::create(b, loc, tile.cloneWith(shape, tile.getElementType()), source, at);
  if (dim == 0)
    gemm.getAMutable().assign(slice);
  else
    gemm.getBMutable().assign(slice);
  for (Operation *store : stores) {
    b.setInsertionPoint(store);
    OpOperand &column = isa<StoreRowsOp>(store) ? cast<StoreRowsOp>(store).getColumnMutable()
                                                : cast<ScatterAddRowsOp>(store).getColumnMutable();
    // Folded, so that stores of one column stay recognizably the same
    // (tile-split-d joins scatters into one column).
    column.set(b.createOrFold<arith::AddIOp>(loc, column.get(),
                                             arith::ConstantIndexOp::create(b, loc, s0)));
  }
  return success();
}

/// Partition `p`'s region: a clone of the body without what does not run
/// in it.
static LogicalResult clonePartition(Assignment &a, unsigned p, Region &into,
                                    IRRewriter &rewriter) {
  IRMapping map;
  a.body->cloneInto(&into, map);
  Mask bit = Mask(1) << p;
  // The original ops in program order, and their clones.
  SmallVector<Operation *> order;
  a.body->walk<WalkOrder::PreOrder>([&](Operation *op) {
    order.push_back(op);
    return nested(op) ? WalkResult::advance() : WalkResult::skip();
  });
  SmallVector<std::pair<Operation *, BitVector>> shrink;
  for (Operation *op : order) {
    if (!isa<scf::ForOp, scf::IfOp>(op) || !(a.runs.lookup(op) & bit))
      continue;
    BitVector keep(op->getNumResults());
    for (OpResult r : op->getResults())
      keep[r.getResultNumber()] = (a.of(r) & bit) != 0;
    if (keep.all())
      continue;
    Operation *clone = map.lookup(op);
    dropYielded(clone, keep);
    shrink.emplace_back(clone, keep);
  }
  // Users before what they use.
  for (Operation *op : llvm::reverse(order))
    if (!isa<scf::YieldOp>(op) && !(a.runs.lookup(op) & bit))
      rewriter.eraseOp(map.lookup(op));
  for (auto &[op, keep] : shrink) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      dropResults(rewriter, loop, keep);
    else
      dropResults(rewriter, cast<scf::IfOp>(op), keep);
  }
  SmallVector<GemmOp> shared;
  into.walk([&](GemmOp gemm) {
    if (gemm->hasAttr(kPartitionRowsAttr) || gemm->hasAttr(kPartitionColsAttr))
      shared.push_back(gemm);
  });
  for (GemmOp gemm : shared)
    if (failed(narrowShare(gemm, p, gemm->hasAttr(kPartitionRowsAttr) ? 0 : 1)))
      return failure();
  // What the partition computes but does not use (users first).
  into.walk<WalkOrder::PostOrder, ReverseIterator>([&](Operation *op) {
    if (isOpTriviallyDead(op))
      rewriter.eraseOp(op);
  });
  into.walk([](Operation *op) { op->removeAttr(kPartitionAttr); });
  return success();
}

struct TileSplitPartitionsPass
    : public sparse_mla::tile::impl::TileSplitPartitionsPassBase<TileSplitPartitionsPass> {
  void runOnOperation() override {
    SmallVector<WarpSpecializeOp> unsplit;
    getOperation().walk([&](WarpSpecializeOp ws) {
      if (ws.isUnsplit())
        unsplit.push_back(ws);
    });
    for (WarpSpecializeOp ws : unsplit) {
      unsigned n = ws.getRegisters().size();
      // `{}` parses to a region without a block: the partitions run nothing.
      if (ws.getPartitions().front().empty())
        ws.getPartitions().front().emplaceBlock();
      Assignment a{&ws.getPartitions().front(), (Mask(1) << n) - 1, {}, {}};
      if (failed(a.run()))
        return signalPassFailure();
      // Buffers one partition writes and others read go through channels;
      // the assignment then places their enter and exit ops.
      bool inserted = false;
      auto partitionsOf = [&](Operation *op) {
        for (; op; op = op->getParentOp())
          if (auto it = a.runs.find(op); it != a.runs.end())
            return it->second;
        return a.all;
      };
      if (failed(insertChannels(ws, partitionsOf, inserted)))
        return signalPassFailure();
      if (inserted) {
        a = Assignment{&ws.getPartitions().front(), (Mask(1) << n) - 1, {}, {}};
        if (failed(a.run()))
          return signalPassFailure();
      }
      IRRewriter rewriter(ws);
      auto split = WarpSpecializeOp::create(rewriter, ws.getLoc(), ws.getWarpgroupsAttr(),
                                            ws.getRegistersAttr(), ws.getStagesAttr(), n);
      for (unsigned p = 0; p < n; ++p)
        if (failed(clonePartition(a, p, split.getPartitions()[p], rewriter)))
          return signalPassFailure();
      rewriter.eraseOp(ws);
    }
  }
};

} // namespace
