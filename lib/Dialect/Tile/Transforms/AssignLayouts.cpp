//===- AssignLayouts.cpp - Layouts for register and shared tiles ----------===//
//
// Register layouts are found by constraint propagation: a few ops fix the
// layout of their tiles (GEMM accumulators, gather indices), the others tie
// layouts together (ops whose tiles share a layout, loops: equal;
// reductions, broadcasts, the row indices of row scatters and stores: slice
// of). Cheap producers demanded in two layouts are cloned,
// with the side-effect-free chains (maps, broadcasts) that lead to them.
// Whatever is left free gets the coalesced layout of its shape.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

static RegTileType regType(Value v) { return dyn_cast<RegTileType>(v.getType()); }

/// The layout a tile of `type` gets when nothing constrains it.
static Attribute defaultLayout(RegTileType type) {
  MLIRContext *ctx = type.getContext();
  unsigned bytes = getElementBytes(type.getElementType());
  if (type.getRank() == 2) {
    // Rows within a warp first; a single row spreads over the warpgroup.
    if (BlockedLayoutAttr l = getCoalescedLayout(ctx, type.getShape(), bytes))
      return l;
    return getCoalescedLayout(ctx, type.getShape(), bytes,
                              /*maxLanes=*/hopper::kWarpgroupThreads);
  }
  // A vector: spread over the lanes of each warp, replicated across rows.
  int64_t n = type.getShape()[0], lanes = 1;
  while (lanes < hopper::kWarpThreads && n % (lanes * 2) == 0)
    lanes *= 2;
  return SliceLayoutAttr::get(ctx, 0, BlockedLayoutAttr::get(ctx, 1, lanes));
}

struct LayoutSolver {
  llvm::MapVector<Value, Attribute> layouts;
  SmallVector<Value> worklist;
  bool failedFlag = false;

  /// Asks for `v` (seen through `use`, if any) to have layout `l`.
  void demand(Value v, Attribute l, OpOperand *use) {
    if (!l || !regType(v))
      return;
    if (Attribute fixed = regType(v).getLayout()) {
      if (fixed != l)
        conflict(v, l, use);
      return;
    }
    auto it = layouts.find(v);
    if (it == layouts.end()) {
      std::string why;
      if (failed(getThreadElements(l, regType(v).getShape(), &why))) {
        emitError(v.getLoc()) << "tile of shape " << regType(v)
                              << " cannot take layout " << l << ": " << why;
        failedFlag = true;
        return;
      }
      layouts[v] = l;
      worklist.push_back(v);
      return;
    }
    if (it->second != l)
      conflict(v, l, use);
  }

  void conflict(Value v, Attribute l, OpOperand *use) {
    Operation *def = v.getDefiningOp();
    if (use && def && isa<LoadOp, SplatOp, ReadOp, MapOp, BroadcastOp, IotaOp, GatherOp>(def)) {
      OpBuilder b(use->getOwner());
      Operation *clone = b.clone(*def);
      use->set(clone->getResult(0));
      demand(clone->getResult(0), l, nullptr);
      return;
    }
    InFlightDiagnostic diag = emitError(use ? use->getOwner()->getLoc() : v.getLoc())
                              << "tile needs layout " << l << " here but has "
                              << layoutOf(v);
    diag.attachNote(v.getLoc()) << "tile defined here";
    failedFlag = true;
  }

  Attribute layoutOf(Value v) {
    if (Attribute fixed = regType(v).getLayout())
      return fixed;
    return layouts.lookup(v);
  }

  /// Layout of the 2-D tile whose `dim`-slice is `l`, if `l` is a slice.
  static Attribute parentOf(Attribute l, int64_t dim) {
    auto slice = dyn_cast_if_present<SliceLayoutAttr>(l);
    if (!slice || slice.getDim() != dim)
      return {};
    return slice.getParent();
  }

  /// Propagates the layout of `v` to the tiles tied to it.
  void propagate(Value v) {
    Attribute l = layoutOf(v);
    MLIRContext *ctx = l.getContext();
    // Ties through the producer.
    if (Operation *def = v.getDefiningOp()) {
      if (def->hasTrait<sparse_mla::tile::OpTrait::SameLayoutTiles>())
        tieAll(def, l);
      else if (auto red = dyn_cast<ReduceOp>(def))
        demand(red.getSource(), parentOf(l, red.getDim()),
               &red.getSourceMutable());
      else if (auto bc = dyn_cast<BroadcastOp>(def))
        demand(bc.getSource(), SliceLayoutAttr::get(ctx, bc.getDim(), l),
               &bc.getSourceMutable());
      else if (auto gemm = dyn_cast<GemmOp>(def))
        demand(gemm.getAcc(), l, &gemm.getAccMutable());
      else if (isa<scf::ForOp, PipelinedForOp>(def))
        tieLoop(def, cast<OpResult>(v).getResultNumber(), l);
      else if (auto ifOp = dyn_cast<scf::IfOp>(def))
        tieIf(ifOp, cast<OpResult>(v).getResultNumber(), l);
    } else if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *parent = arg.getOwner()->getParentOp();
      if (isa<scf::ForOp, PipelinedForOp>(parent) && arg.getArgNumber() > 0)
        tieLoop(parent, arg.getArgNumber() - 1, l);
    }
    // Ties through the users.
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<sparse_mla::tile::OpTrait::SameLayoutTiles>()) {
        // An op whose tiles have a layout already keeps it: this operand is
        // then demanded in it (a cheap producer is cloned).
        Attribute own = ownLayout(user, &use);
        if (own && own != l)
          demand(use.get(), own, &use);
        else
          tieAll(user, l);
      } else if (auto red = dyn_cast<ReduceOp>(user)) {
        demand(red.getResult(), SliceLayoutAttr::get(ctx, red.getDim(), l),
               nullptr);
      } else if (auto bc = dyn_cast<BroadcastOp>(user)) {
        demand(bc.getResult(), parentOf(l, bc.getDim()), nullptr);
      } else if (auto sc = dyn_cast<ScatterAddRowsOp>(user)) {
        if (use.getOperandNumber() == 0)
          demand(sc.getRows(), SliceLayoutAttr::get(ctx, 1, l),
                 &sc.getRowsMutable());
      } else if (auto st = dyn_cast<StoreRowsOp>(user)) {
        // Rows of the value (its columns when transposed).
        if (use.getOperandNumber() == 0)
          demand(st.getRows(), SliceLayoutAttr::get(ctx, st.getTranspose() ? 0 : 1, l),
                 &st.getRowsMutable());
      } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        if (isa<scf::ForOp>(yield->getParentOp()))
          tieLoop(yield->getParentOp(), use.getOperandNumber(), l);
        else if (auto ifOp = dyn_cast<scf::IfOp>(yield->getParentOp()))
          tieIf(ifOp, use.getOperandNumber(), l);
      } else if (auto yield = dyn_cast<YieldOp>(user)) {
        if (isa<PipelinedForOp>(yield->getParentOp()))
          tieLoop(yield->getParentOp(), use.getOperandNumber(), l);
      } else if (isa<scf::ForOp, PipelinedForOp>(user)) {
        // Operands 0-2 are the bounds and step; the rest are iter_arg inits.
        if (use.getOperandNumber() >= 3)
          tieLoop(user, use.getOperandNumber() - 3, l);
      }
    }
  }

  /// The layout of a tile of `op` other than the one `except` uses, if any.
  Attribute ownLayout(Operation *op, OpOperand *except) {
    for (OpOperand &in : op->getOpOperands())
      if (&in != except && regType(in.get()))
        if (Attribute l = layoutOf(in.get()))
          return l;
    for (Value r : op->getResults())
      if (regType(r))
        if (Attribute l = layoutOf(r))
          return l;
    return {};
  }

  /// Ties the register tiles of an op whose tiles share one layout.
  void tieAll(Operation *op, Attribute l) {
    for (OpOperand &in : op->getOpOperands())
      demand(in.get(), l, &in);
    for (Value r : op->getResults())
      demand(r, l, nullptr);
  }

  /// Ties iter_arg `i` of a loop: init, region argument, yielded value, result.
  void tieLoop(Operation *loop, unsigned i, Attribute l) {
    Block &body = loop->getRegion(0).front();
    OpOperand &init = loop->getOpOperand(3 + i);
    demand(init.get(), l, &init);
    demand(body.getArgument(1 + i), l, nullptr);
    OpOperand &yielded = body.getTerminator()->getOpOperand(i);
    demand(yielded.get(), l, &yielded);
    demand(loop->getResult(i), l, nullptr);
  }

  /// Ties result `i` of an scf.if to the values both branches yield.
  void tieIf(scf::IfOp ifOp, unsigned i, Attribute l) {
    demand(ifOp.getResult(i), l, nullptr);
    for (Region *r : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
      if (!r->empty()) {
        OpOperand &yielded = r->front().getTerminator()->getOpOperand(i);
        demand(yielded.get(), l, &yielded);
      }
  }

  void solve() {
    while (!worklist.empty() && !failedFlag)
      propagate(worklist.pop_back_val());
  }
};

struct TileAssignLayoutsPass
    : public sparse_mla::tile::impl::TileAssignLayoutsPassBase<TileAssignLayoutsPass> {
  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (failed(requireSpecialized(kernel)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    if (failed(assignSharedLayouts(kernel)))
      return signalPassFailure();

    LayoutSolver solver;
    auto mma = MmaLayoutAttr::get(ctx);
    // Anchors.
    kernel.walk([&](Operation *op) {
      if (auto gemm = dyn_cast<GemmOp>(op)) {
        solver.demand(gemm.getResult(), mma, nullptr);
        solver.demand(gemm.getAcc(), mma, &gemm.getAccMutable());
        if (isa<RegTileType>(gemm.getA().getType()))
          solver.demand(gemm.getA(), mma, &gemm.getAMutable());
      } else if (auto gather = dyn_cast<GatherRowsOp>(op)) {
        auto dst = cast<SmemTileType>(gather.getDest().getType());
        Attribute rows =
            getCoalescedLayout(ctx, dst.getShape(),
                               getElementBytes(dst.getElementType()), kGatherLanes);
        if (!rows) {
          gather.emitOpError("has no coalesced layout for ") << dst;
          solver.failedFlag = true;
          return;
        }
        solver.demand(gather.getRows(), SliceLayoutAttr::get(ctx, 1, rows),
                      &gather.getRowsMutable());
      }
    });
    // Layouts written in the kernel spread like the anchors'.
    kernel.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Value arg : block.getArguments())
            if (regType(arg) && regType(arg).getLayout())
              solver.worklist.push_back(arg);
      for (Value v : op->getResults())
        if (regType(v) && regType(v).getLayout())
          solver.worklist.push_back(v);
    });
    solver.solve();
    // Free tiles: defaults at their producers, in program order, 2-D loads
    // first: their coalesced layout is the one worth spreading.
    while (!solver.failedFlag) {
      Value next;
      for (bool loadsOnly : {true, false}) {
        kernel.walk([&](Operation *op) {
          if (loadsOnly && !isa<LoadOp, ReadOp>(op))
            return WalkResult::advance();
          for (Value v : op->getResults())
            if (!next && regType(v) && !solver.layoutOf(v) &&
                (!loadsOnly || regType(v).getRank() == 2))
              next = v;
          return next ? WalkResult::interrupt() : WalkResult::advance();
        });
        if (next)
          break;
      }
      if (!next)
        break;
      Attribute l = defaultLayout(regType(next));
      if (!l) {
        emitError(next.getLoc()) << "no layout fits " << next.getType();
        return signalPassFailure();
      }
      solver.demand(next, l, nullptr);
      solver.solve();
    }
    if (solver.failedFlag)
      return signalPassFailure();
    for (auto [v, l] : solver.layouts)
      v.setType(regType(v).withLayout(l));
  }

  /// The widest swizzle whose atoms the column slices of `alloc` keep
  /// whole: a slice's corner must start an atom (tile.slice's rule), so
  /// warpgroups that each write their columns of one tile get atoms of
  /// their width.
  static int64_t widestSwizzleForSlices(AllocOp alloc, unsigned elementBytes) {
    int64_t widest = 128;
    for (Operation *user : alloc->getUsers())
      if (auto slice = dyn_cast<SliceOp>(user); slice && slice.getSource() == alloc)
        while (widest > 16 &&
               (knownMultiple(slice.getOffsets().back()) * elementBytes) % widest)
          widest /= 2;
    return widest;
  }

  /// Default swizzles for allocations; slices inherit their parent's layout.
  LogicalResult assignSharedLayouts(KernelOp kernel) {
    WalkResult r = kernel.walk([&](Operation *op) -> WalkResult {
      if (auto alloc = dyn_cast<AllocOp>(op)) {
        auto type = cast<SmemTileType>(alloc.getType());
        unsigned e = getElementBytes(type.getElementType());
        if (!type.getLayout())
          alloc.getResult().setType(SmemTileType::get(
              type.getShape(), type.getElementType(),
              getDefaultSharedLayout(op->getContext(), type.getShape(), e,
                                     widestSwizzleForSlices(alloc, e))));
        return WalkResult::advance();
      }
      auto slice = dyn_cast<SliceOp>(op);
      if (!slice)
        return WalkResult::advance();
      auto src = cast<SmemTileType>(slice.getSource().getType());
      auto res = cast<SmemTileType>(slice.getResult().getType());
      SharedLayoutAttr layout = src.getSharedLayout();
      if (!layout)
        return slice.emitOpError("slices a tile that has no layout");
      // A swizzled tile's slices start on atoms: tile.slice's verifier says
      // so once the layout is set. An unswizzled one's may start inside a
      // column block but not run past it: known here for constant offsets.
      unsigned e = getElementBytes(src.getElementType());
      std::optional<int64_t> col = getConstantIntValue(slice.getOffsets().back());
      int64_t width = layout.getPitch();
      if (!layout.getSwizzle() && col && (*col * e) % width &&
          (*col * e) % width + res.getShape().back() * e > width)
        return slice.emitOpError("column offset ")
               << *col << " runs across a " << width << "-byte column block";
      if (res.getLayout() && res.getLayout() != layout)
        return slice.emitOpError("result layout differs from the source's");
      slice.getResult().setType(
          SmemTileType::get(res.getShape(), res.getElementType(), layout));
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }
};

} // namespace
