//===- SplitD.cpp - Wide GEMM-and-scatter chains in column chunks ---------===//
//
// A chain is a tile.splat, tile.gemm ops that each accumulate into the one
// before, and one tile.scatter_add_rows of the last result. A chain wider
// than the chunk becomes loops over chunk-column pieces, piece c computed by
// warpgroup c mod W from the same A and a column slice of B. Chains of one
// block that scatter into the same destination, rows and column are summed
// piece by piece before a single scatter (those after the first must start
// from +0.0), so every destination element is reduced once. Where one
// warpgroup runs the chains and two pieces fit its registers beside the
// tiles live there, the pieces are straight-line code instead, each issued
// asynchronously before the previous one is waited for and scattered.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"

#include "sparse-mla/Target/Hopper.h"

#include "mlir/Analysis/Liveness.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILESPLITDPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct Chain {
  SplatOp init;
  SmallVector<GemmOp> gemms; // in program order
  ScatterAddRowsOp scatter;

  int64_t width() { return scatter.getValue().getType().getShape()[1]; }
  int64_t height() { return scatter.getValue().getType().getShape()[0]; }
};

/// Whether the ops strictly between `from` and `to` are GEMMs (which only
/// read shared memory), channel exits (a release may always come later:
/// they move below the pieces) or free of memory effects, so that GEMMs and
/// scatters may move from `from` down to `to`.
static bool onlyGemmsOrPureBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (!isa<GemmOp, GetExitOp>(op) && !isMemoryEffectFree(op))
      return false;
  return true;
}

/// Moves the channel exits among `group`'s ops below its last scatter,
/// where its pieces read the channels' buffers.
static void releaseAfterPieces(MutableArrayRef<Chain> group) {
  Operation *last = group.back().scatter;
  SmallVector<Operation *> exits;
  for (Operation *op = group.front().gemms.front(); op != last; op = op->getNextNode())
    if (isa<GetExitOp>(op))
      exits.push_back(op);
  for (Operation *op : llvm::reverse(exits))
    op->moveAfter(last);
}

/// The chain that ends in `scatter`, if its GEMMs feed only one another and
/// may move down to the scatter (its pieces are emitted there).
static std::optional<Chain> chainOf(ScatterAddRowsOp scatter) {
  // A staging tile holds the whole value: the chain stays as written.
  if (scatter.getStaging())
    return std::nullopt;
  Chain chain;
  chain.scatter = scatter;
  Value v = scatter.getValue();
  Block *block = scatter->getBlock();
  while (auto gemm = v.getDefiningOp<GemmOp>()) {
    if (!v.hasOneUse() || gemm->getBlock() != block)
      return std::nullopt;
    chain.gemms.insert(chain.gemms.begin(), gemm);
    v = gemm.getAcc();
  }
  chain.init = v.getDefiningOp<SplatOp>();
  if (!chain.init || chain.gemms.empty() ||
      !onlyGemmsOrPureBetween(chain.gemms.front(), scatter))
    return std::nullopt;
  return chain;
}

/// Registers per thread of a warpgroup's register tile (an estimate before
/// layouts: its bits spread over the warpgroup's threads).
static int64_t tileRegisters(RegTileType type) {
  int64_t bits = type.getNumElements() * type.getElementType().getIntOrFloatBitWidth();
  return llvm::divideCeil(bits, 32 * hopper::kWarpgroupThreads);
}

/// Registers a warpgroup needs beside its register tiles while it scatters
/// a piece: addresses, rows, the lane trade of an interleaved scatter. From
/// ptxas on the backward's dKV warpgroup: two 64-column pieces beside 161
/// registers of tiles spill 184 bytes (255 budget), beside 145 none.
constexpr int64_t kScatterRegisters = 40;
/// The same for a fixed-point scatter (64-bit values and addresses per
/// reduction, a row half's values transposed among lanes). From ptxas on the
/// 64-head D_tail = 0 deterministic variant: two pieces beside 129 registers
/// of tiles leave it 62 and spill 40 bytes (10 registers).
constexpr int64_t kFixedPointScatterRegisters = 72;

static bool sameTarget(Chain &a, Chain &b) {
  return a.scatter.getDest() == b.scatter.getDest() &&
         a.scatter.getRows() == b.scatter.getRows() &&
         isEqualConstantIntOrValue(a.scatter.getColumn(), b.scatter.getColumn()) &&
         a.height() == b.height() &&
         a.scatter.getInterleaved() == b.scatter.getInterleaved() &&
         a.scatter.getScale() == b.scatter.getScale() &&
         a.scatter.getOverflow() == b.scatter.getOverflow();
}

/// Whether `b` may be summed into `a`'s scatter: delaying `a`'s GEMMs and
/// additions to `b`'s place must change nothing another op could observe.
static bool canJoin(Chain &a, Chain &b) {
  return sameTarget(a, b) && b.init.isPositiveZero() &&
         onlyGemmsOrPureBetween(a.scatter, b.scatter);
}

struct SplitDPass : public sparse_mla::tile::impl::TileSplitDPassBase<SplitDPass> {
  using Base::Base;

  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (failed(requireSpecialized(kernel)))
      return signalPassFailure();
    if (chunk <= 0 || chunk % 8) {
      kernel.emitError("tile-split-d: chunk (")
          << static_cast<int64_t>(chunk) << ") must be a positive multiple of 8";
      return signalPassFailure();
    }
    // Groups of chains, each group joined into one scatter per piece.
    SmallVector<SmallVector<Chain>> groups;
    kernel.walk([&](Block *block) {
      SmallVector<Chain> open;
      for (auto scatter : block->getOps<ScatterAddRowsOp>()) {
        std::optional<Chain> chain = chainOf(scatter);
        if (!chain)
          continue;
        if (!open.empty() && canJoin(open.back(), *chain)) {
          open.push_back(*chain);
          continue;
        }
        if (!open.empty())
          groups.push_back(std::move(open));
        open = {*chain};
      }
      if (!open.empty())
        groups.push_back(std::move(open));
    });
    // The groups to cut and whether their pieces overlap, decided on the
    // kernel as written (before any group is rewritten).
    Liveness liveness(kernel);
    SmallVector<std::pair<MutableArrayRef<Chain>, bool>> cuts;
    for (auto &group : groups) {
      int64_t widest = 0;
      bool divisible = true;
      for (Chain &c : group) {
        widest = std::max(widest, c.width());
        divisible &= c.width() % chunk == 0;
      }
      if (widest <= chunk)
        continue;
      if (!divisible) {
        group.front().scatter.emitOpError(
            "tile-split-d: the columns of the chains into this destination "
            "must be multiples of the chunk (")
            << static_cast<int64_t>(chunk) << ")";
        return signalPassFailure();
      }
      if (group.front().scatter.getInterleaved() && chunk % kInterleaveColumns) {
        group.front().scatter.emitOpError("tile-split-d: an interleaved destination takes chunks of ")
            << kInterleaveColumns << " columns, not " << static_cast<int64_t>(chunk);
        return signalPassFailure();
      }
      cuts.push_back({group, overlap && overlapFits(group, liveness)});
    }
    for (auto [group, overlapped] : cuts) {
      if (overlapped)
        splitOverlapped(group);
      else
        split(group);
    }
  }

  /// Pieces of `group`: those of its widest chain.
  int64_t pieceCount(MutableArrayRef<Chain> group) {
    int64_t pieces = 0;
    for (Chain &c : group)
      pieces = std::max(pieces, c.width() / chunk);
    return pieces;
  }

  /// Whether one warpgroup runs `group` and two of its pieces fit beside the
  /// register tiles live at its scatters (the chains' own excepted).
  bool overlapFits(MutableArrayRef<Chain> group, Liveness &liveness) {
    ScatterAddRowsOp last = group.back().scatter;
    if (getRunningWarpgroups(last).second != 1)
      return false;
    llvm::SmallPtrSet<Value, 8> chainValues;
    for (Chain &c : group)
      for (GemmOp g : c.gemms)
        chainValues.insert(g.getResult());
    // Live across the scatters: what is used after them or after an op
    // around them (whose own results do not exist yet inside it).
    llvm::SmallPtrSet<Value, 16> live;
    for (Chain &c : group)
      for (Operation *op = c.scatter; op && op != getOperation(); op = op->getParentOp())
        for (Value v : liveness.getLiveness(op->getBlock())->currentlyLiveValues(op))
          if (v.getDefiningOp() != op && !liveness.isDeadAfter(v, op))
            live.insert(v);
    // A splat holds no registers until its users materialize it.
    int64_t used = 0;
    for (Value v : live)
      if (auto type = dyn_cast<RegTileType>(v.getType());
          type && !chainValues.contains(v) && !v.getDefiningOp<SplatOp>())
        used += tileRegisters(type);
    auto accType = cast<RegTileType>(group.front().init.getType());
    auto pieceType = RegTileType::get({group.front().height(), chunk}, accType.getElementType());
    int64_t scatter = last.getScale() ? kFixedPointScatterRegisters : kScatterRegisters;
    return used + 2 * tileRegisters(pieceType) + scatter <= getRegisterBudget(last);
  }

  /// Members of `group` that cover piece `piece`.
  static SmallVector<Chain *> covering(MutableArrayRef<Chain> group, int64_t piece,
                                       int64_t chunk) {
    SmallVector<Chain *> in;
    for (Chain &c : group)
      if (c.width() > piece * chunk)
        in.push_back(&c);
    return in;
  }

  /// Erases the chains of `group`, replaced by their pieces.
  static void eraseChains(MutableArrayRef<Chain> group) {
    for (Chain &c : llvm::reverse(group)) {
      c.scatter.erase();
      for (GemmOp g : llvm::reverse(c.gemms))
        g.erase();
    }
    for (Chain &c : group)
      if (c.init->use_empty())
        c.init.erase();
  }

  /// Replaces the chains of `group` by straight-line pieces: piece c + 1's
  /// products are issued (one asynchronous group) before piece c is waited
  /// for and scattered.
  void splitOverlapped(MutableArrayRef<Chain> group) {
    releaseAfterPieces(group);
    ScatterAddRowsOp last = group.back().scatter;
    OpBuilder b(last);
    Location loc = last.getLoc();
    int64_t pieces = pieceCount(group);
    auto issue = [&](int64_t piece) {
      Value offset = arith::ConstantIndexOp::create(b, loc, piece * chunk);
      return std::make_pair(emitProducts(b, loc, covering(group, piece, chunk), offset,
                                         /*async=*/true),
                            offset);
    };
    auto running = issue(0);
    for (int64_t piece = 0; piece < pieces; ++piece) {
      std::optional<std::pair<Value, Value>> next;
      if (piece + 1 < pieces)
        next = issue(piece + 1);
      auto done = GemmWaitOp::create(b, loc, TypeRange{running.first.getType()},
                                     ValueRange{running.first}, next ? 1 : 0);
      emitScatter(b, loc, group.front(), done.getResult(0), running.second);
      if (next)
        running = *next;
    }
    eraseChains(group);
  }

  /// Replaces the chains of `group` by loops over their pieces.
  void split(MutableArrayRef<Chain> group) {
    releaseAfterPieces(group);
    ScatterAddRowsOp last = group.back().scatter;
    OpBuilder b(last);
    Location loc = last.getLoc();
    auto [firstWg, wgs] = getRunningWarpgroups(last);
    int64_t pieces = pieceCount(group);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value width = idx(chunk), step = idx(wgs);
    Value wg;
    if (wgs > 1) {
      wg = WarpgroupIdOp::create(b, loc, b.getIndexType());
      if (firstWg)
        wg = arith::SubIOp::create(b, loc, wg, idx(firstWg));
    }
    // Pieces covered by the same chains share a loop.
    for (int64_t lo = 0; lo < pieces;) {
      SmallVector<Chain *> members = covering(group, lo, chunk);
      int64_t hi = lo + 1;
      while (hi < pieces && covering(group, hi, chunk) == members)
        ++hi;
      // This warpgroup's first piece from lo: lo + (wg - lo) mod W.
      Value start = idx(lo);
      if (wgs > 1) {
        Value shifted = wg;
        if (lo % wgs)
          shifted = arith::AddIOp::create(b, loc, wg, idx(wgs - lo % wgs));
        start = arith::AddIOp::create(b, loc, start,
                                      arith::RemUIOp::create(b, loc, shifted, step));
      }
      auto loop = scf::ForOp::create(b, loc, start, idx(hi), step);
      OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
      Value offset = arith::MulIOp::create(body, loc, loop.getInductionVar(), width);
      Value piece = emitProducts(body, loc, members, offset, /*async=*/false);
      emitScatter(body, loc, group.front(), piece, offset);
      lo = hi;
    }
    eraseChains(group);
  }

  /// The products of the piece at column `offset` of every chain in
  /// `members`, summed. Slices come first so that the GEMMs are adjacent and
  /// form one wgmma group.
  Value emitProducts(OpBuilder &b, Location loc, ArrayRef<Chain *> members,
                     Value offset, bool async) {
    SmallVector<Value> bPieces;
    for (Chain *c : members)
      for (GemmOp g : c->gemms)
        bPieces.push_back(columnSlice(b, loc, g, offset));
    Chain &first = *members.front();
    auto accType = cast<RegTileType>(first.init.getType());
    auto pieceType = RegTileType::get({first.height(), chunk}, accType.getElementType(),
                                      accType.getLayout());
    Value acc = SplatOp::create(b, loc, pieceType, first.init.getValue());
    unsigned i = 0;
    for (Chain *c : members)
      for (GemmOp g : c->gemms)
        acc = GemmOp::create(b, g.getLoc(), pieceType, g.getA(), bPieces[i++], acc,
                             g.getTransposeA(), g.getTransposeB(), async);
    return acc;
  }

  /// Scatters `piece`, the columns from `offset` of `first`'s chain.
  void emitScatter(OpBuilder &b, Location loc, Chain &first, Value piece, Value offset) {
    Value column = first.scatter.getColumn();
    column = matchPattern(column, m_Zero())
                 ? offset
                 : arith::AddIOp::create(b, loc, column, offset).getResult();
    ScatterAddRowsOp::create(b, first.scatter.getLoc(), piece, first.scatter.getDest(),
                             first.scatter.getRows(), column, first.scatter.getScale(),
                             first.scatter.getOverflow(), /*staging=*/Value(),
                             first.scatter.getInterleaved());
  }

  /// The chunk columns of `gemm`'s B operand from `offset`; a slice of a
  /// slice is folded into one slice of the source.
  Value columnSlice(OpBuilder &b, Location loc, GemmOp gemm, Value offset) {
    auto type = cast<SmemTileType>(gemm.getB().getType());
    unsigned nDim = gemm.getTransposeB() ? 0 : 1;
    Value source = gemm.getB();
    SmallVector<Value> offsets;
    unsigned dropped = 0;
    if (auto slice = gemm.getB().getDefiningOp<SliceOp>()) {
      source = slice.getSource();
      offsets = llvm::to_vector(slice.getOffsets());
      dropped = offsets.size() - type.getRank();
    } else {
      offsets.assign(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
    }
    Value &n = offsets[dropped + nDim];
    n = matchPattern(n, m_Zero()) ? offset : arith::AddIOp::create(b, loc, n, offset);
    SmallVector<int64_t> shape(type.getShape());
    shape[nDim] = chunk;
    auto pieceType = SmemTileType::get(shape, type.getElementType(), type.getLayout());
    return SliceOp::create(b, loc, pieceType, source, offsets);
  }
};

} // namespace
