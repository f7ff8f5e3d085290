//===- ScattersToNVVM.cpp - Row scatter-adds to red and bulk reductions --===//
//
// Rows of f32 are added into global memory with red.global.add (16-byte
// vectors where a thread holds four contiguous columns; into an interleaved
// destination, lanes trade halves so that each reduction adds 128-byte runs),
// or staged in shared memory and added by the TMA (cp.reduce.async.bulk)
// while the threads go on, or, scaled to 64-bit fixed point, with integer
// additions whose sum does not depend on their order (an mma tile's values
// transposed among lanes first, so that each instruction adds whole lines).
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Columns of an i64 row in one L2 line.
constexpr int64_t kLineColumns = hopper::kL2LineBytes / 8;

/// Emits `red.global.add` of `values` (f32) at `ptr`, widest vectors first
/// (v4 moves 16 bytes per instruction), under `predicate` (i32, 0: skip):
/// a predicate instead of a branch per row lets ptxas issue a tile's
/// reductions back to back.
static void emitReductions(OpBuilder &b, Location loc, Value ptr,
                           ArrayRef<Value> values, Value predicate) {
  for (unsigned done = 0; done < values.size();) {
    unsigned left = values.size() - done;
    unsigned n = left >= 4 ? 4 : left >= 2 ? 2 : 1;
    SmallVector<Value> operands{
        done ? LLVM::GEPOp::create(b, loc, ptr.getType(), b.getF32Type(), ptr,
                                   ArrayRef<LLVM::GEPArg>{(int32_t)done})
                   .getResult()
             : ptr};
    std::string asmStr = n == 1 ? "red.relaxed.gpu.global.add.f32 [$0], $1;"
                                : "red.relaxed.gpu.global.add.v" +
                                      std::to_string(n) + ".f32 [$0], {";
    std::string constraints = "l";
    for (unsigned k = 0; k < n; ++k) {
      operands.push_back(values[done + k]);
      constraints += ",f";
      if (n > 1)
        asmStr += "$" + std::to_string(k + 1) + (k + 1 < n ? ", " : "");
    }
    if (n > 1)
      asmStr += "};";
    operands.push_back(predicate);
    constraints += ",r";
    asmStr = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(n + 1) + ", 0; @p " + asmStr + " }";
    emitPtx(b, loc, operands, asmStr, constraints);
    done += n;
  }
}

struct ScatterAddRowsLowering : public OpConversionPattern<ScatterAddRowsOp> {
  using OpConversionPattern::OpConversionPattern;

  /// Through a staging tile: the warpgroup writes the value there, and the
  /// thread holding each row's index has the TMA add the row.
  LogicalResult lowerStaged(ScatterAddRowsOp op, OpAdaptor adaptor,
                            ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getValue().getType());
    auto rowsType = cast<RegTileType>(op.getRows().getType());
    auto stage = cast<SmemTileType>(op.getStaging().getType());
    // Unswizzled: the verifier's rule; laid out: checked before the patterns.
    SharedLayoutAttr layout = stage.getSharedLayout();
    // The warpgroup's earlier reductions have read the tile: it may be
    // written again.
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, 0, rewriter.getUnitAttr());
    warpgroupBarrier(rewriter, loc);
    if (op.getInterleaved()) {
      // Rows are copied whole: the staging row holds the interleaved order.
      Value pitch = i32Const(rewriter, loc, layout.getPitch());
      for (const InterleavedPiece &piece : interleavedPieces(rewriter, loc, type)) {
        Value off = arith::AddIOp::create(
            rewriter, loc, arith::MulIOp::create(rewriter, loc, piece.row, pitch),
            arith::MulIOp::create(rewriter, loc, piece.col, i32Const(rewriter, loc, 4)));
        Value v = extractRun(rewriter, loc, adaptor.getValue(), piece.first, piece.count);
        LLVM::StoreOp::create(rewriter, loc, v, bytePointer(rewriter, loc, adaptor.getStaging(), off),
                              piece.count * 4);
      }
    } else {
      writeRunsToShared(rewriter, loc, adaptor.getValue(), type, adaptor.getStaging(), stage);
    }
    // Written by the threads, read by the async proxy.
    NVVM::FenceProxyOp::create(
        rewriter, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    warpgroupBarrier(rewriter, loc);

    ThreadElements rowsTe = *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    Value owner = ownerPredicate(rewriter, loc, rowsType.getLayout());
    Value base = globalBasePointer(rewriter, loc, adaptor.getDest());
    Value pitch = rowPitch(rewriter, loc, adaptor.getDest());
    Value column = toI64(rewriter, loc, adaptor.getColumn());
    Value bytes = i32Const(rewriter, loc, type.getShape()[1] * 4);
    for (Run &run : runsOf(rewriter, loc, rowsType.getLayout(), rowsTe)) {
      for (unsigned k = 0; k < rowsTe.vector; ++k) {
        Value row = vector::ExtractOp::create(rewriter, loc, adaptor.getRows(), run.first + k);
        Value r = arith::AddIOp::create(rewriter, loc, run.coords[0], i32Const(rewriter, loc, k));
        Value valid = andOpt(rewriter, loc, owner,
                             arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                                   row, i32Const(rewriter, loc, 0)));
        ifThen(rewriter, loc, valid, [&](OpBuilder &b) {
          Value linear = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, row), pitch), column);
          Value dst = LLVM::GEPOp::create(b, loc, base.getType(), b.getF32Type(), base,
                                          ValueRange{linear});
          Value src = bytePointer(
              b, loc, adaptor.getStaging(),
              arith::MulIOp::create(b, loc, r, i32Const(b, loc, layout.getPitch())));
          emitPtx(b, loc, {dst, src, bytes},
                  "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], $2;",
                  "l,r,r");
        });
      }
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }

  LogicalResult
  matchAndRewrite(ScatterAddRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getStaging())
      return lowerStaged(op, adaptor, rewriter);
    RegisterScatter scatter(op, adaptor, rewriter);
    auto type = cast<RegTileType>(op.getValue().getType());
    if (op.getScale())
      scatter.fixedPoint(adaptor.getScale(), adaptor.getOverflow());
    else if (op.getInterleaved())
      scatter.interleaved();
    else if (isa<MmaLayoutAttr>(type.getLayout()))
      scatter.mmaPairs();
    else
      scatter.runs();
    rewriter.eraseOp(op);
    return success();
  }

private:
  /// Contiguous values a thread adds into one row.
  struct RowRun {
    Value row;                 // index into dest's rows (i32, < 0: skip)
    Value col;                 // column within the tile (i32)
    SmallVector<Value, 4> values;
  };

  /// The reductions straight from the registers, one function a path (f32
  /// by layout, or fixed point): each run is added as soon as it is formed,
  /// so few values are live.
  struct RegisterScatter {
    RegisterScatter(ScatterAddRowsOp op, OpAdaptor adaptor, ConversionPatternRewriter &b)
        : b(b), loc(op.getLoc()), type(cast<RegTileType>(op.getValue().getType())),
          te(*getThreadElements(type.getLayout(), type.getShape())),
          rowsTe(*getThreadElements(cast<RegTileType>(op.getRows().getType()).getLayout(),
                                    cast<RegTileType>(op.getRows().getType()).getShape())),
          value(adaptor.getValue()), rows(adaptor.getRows()),
          base(globalBasePointer(b, loc, adaptor.getDest())),
          pitch(rowPitch(b, loc, adaptor.getDest())),
          column(toI32(b, loc, adaptor.getColumn())) {}

    ConversionPatternRewriter &b;
    Location loc;
    RegTileType type;
    ThreadElements te, rowsTe;
    Value value, rows, base, pitch, column;
    // Fixed point with overflow flags: the limits, and whether an element of
    // each of the thread's rows (by row offset) did not convert.
    Value limit, minusLimit;
    llvm::MapVector<int64_t, Value> lostByRow;

    Value element(int64_t i) { return vector::ExtractOp::create(b, loc, value, i); }
    Value rowAt(int64_t rowOffset) {
      return vector::ExtractOp::create(b, loc, rows, slicePosition(rowsTe, rowOffset));
    }

    /// Whether bit `mask` of the thread's lane is set.
    Value laneBit(int64_t mask) {
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, threadInWarpgroup(b, loc), i32Const(b, loc, mask)),
          i32Const(b, loc, 0));
    }
    Value pick(Value cond, Value ifSet, Value ifClear) {
      return arith::SelectOp::create(b, loc, cond, ifSet, ifClear);
    }
    Value xorShuffle(Value v, int64_t mask) {
      return gpu::ShuffleOp::create(b, loc, v, i32Const(b, loc, mask),
                                    i32Const(b, loc, hopper::kWarpThreads), gpu::ShuffleMode::XOR)
          .getShuffleResult();
    }
    /// A 2 x 2 transpose between lanes l and l ^ mask (`set`: this lane's
    /// mask bit) in one exchange: the lane with the bit clear ends with (its
    /// lo, the other's lo), the lane with it set with (the other's hi, its hi).
    std::pair<Value, Value> transposeLanes(Value set, int64_t mask, Value lo, Value hi) {
      Value got = xorShuffle(pick(set, lo, hi), mask);
      return {pick(set, got, lo), pick(set, hi, got)};
    }

    void add(const RowRun &r) {
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, r.row,
                                          i32Const(b, loc, 0));
      Value linear = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, r.row), pitch),
          toI64(b, loc, arith::AddIOp::create(b, loc, column, r.col)));
      Value ptr = LLVM::GEPOp::create(b, loc, base.getType(), b.getF32Type(), base,
                                      ValueRange{linear});
      emitReductions(b, loc, ptr, r.values,
                     arith::ExtUIOp::create(b, loc, b.getI32Type(), valid));
    }

    /// Fixed point: each element times the scale, rounded to the nearest
    /// i64, is added with `red.global.add.u64` under the row's predicate.
    /// With `overflow`, a row of the thread with an element that does not
    /// convert (not finite, or at least 2^63 in magnitude: cvt clamps it,
    /// NaN to 0) also sets its flag, once per row the thread holds.
    void fixedPoint(Value scale, Value overflow) {
      if (overflow) {
        limit = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0x1p63f));
        minusLimit = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-0x1p63f));
      }
      // Scaled as they are added, so that few values are live.
      auto scaled = [&](int64_t i) -> Value {
        Value x = arith::MulFOp::create(b, loc, element(i), scale);
        if (overflow)
          noteLost(i, x);
        return x;
      };
      if (isa<MmaLayoutAttr>(type.getLayout()) && type.getShape()[1] % kLineColumns == 0)
        fixedPointLines(scaled);
      else
        fixedPointRuns(scaled);
      if (overflow)
        flagLostRows(overflow);
    }

    /// Adds `x` rounded to an i64 at `ptr`, where i32 `valid` is not 0.
    void addFixed(Value ptr, Value x, Value valid) {
      emitPtx(b, loc, {ptr, x, valid},
              "{ .reg .pred p; .reg .s64 v; setp.ne.b32 p, $2, 0; cvt.rni.s64.f32 v, $1; "
              "@p red.relaxed.gpu.global.add.u64 [$0], v; }",
              "l,f,r");
    }

    Value validI32(Value row) {
      return arith::ExtUIOp::create(
          b, loc, b.getI32Type(),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, i32Const(b, loc, 0)));
    }

    /// Any layout: each element where the thread holds it.
    void fixedPointRuns(function_ref<Value(int64_t)> scaled) {
      for (Run &run : runsOf(b, loc, type.getLayout(), te)) {
        Value row = rowAt(run.offsets[0]);
        Value valid = validI32(row);
        Value linear = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, row), pitch),
            toI64(b, loc, arith::AddIOp::create(b, loc, column, run.coords[1])));
        for (unsigned k = 0; k < te.vector; ++k)
          addFixed(elementPointer(linear, k), scaled(run.first + k), valid);
      }
    }

    Value elementPointer(Value linear, int64_t k) {
      return LLVM::GEPOp::create(
          b, loc, base.getType(), b.getI64Type(), base,
          ValueRange{arith::AddIOp::create(b, loc, linear,
                                           arith::ConstantIntOp::create(b, loc, k, 64))});
    }

    /// An mma tile in whole 128-byte lines. The L2 takes a reduction
    /// request per line a warp touches: 8-byte elements added where the
    /// accumulator holds them touch 8 rows of 32 bytes per instruction, and
    /// cost 2.5x as much as whole lines (bench/probes/fixed_point_probe.cu:
    /// 4.9x against 2.0x the fp32 default). A row's 16 columns of a 16-column
    /// group are held by the 4 lanes of a quad, 4 each; the quads of rows
    /// r..r+3 (lanes q + 4a, a = 0..3) transpose their 4 x 4 values in two
    /// xor exchanges, after which instruction k adds row r + k's 16 columns
    /// from the 16 lanes of each half warp.
    void fixedPointLines(function_ref<Value(int64_t)> scaled) {
      Value lane = arith::AndIOp::create(b, loc, threadInWarpgroup(b, loc),
                                         i32Const(b, loc, hopper::kWarpThreads - 1));
      Value a0 = laneBit(4), a1 = laneBit(8);
      Value width = i32Const(b, loc, hopper::kWarpThreads);
      // Column of this lane's value a after the transpose: value a of lane
      // q held columns 2q + (a & 1) + 8 (a >> 1) of its row.
      Value quadCol = arith::MulIOp::create(
          b, loc, arith::AndIOp::create(b, loc, lane, i32Const(b, loc, 3)), i32Const(b, loc, 2));
      Value aIndex = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, lane, i32Const(b, loc, 2)), i32Const(b, loc, 3));
      Value lineCol = arith::AddIOp::create(
          b, loc, quadCol,
          arith::AddIOp::create(
              b, loc, arith::AndIOp::create(b, loc, aIndex, i32Const(b, loc, 1)),
              arith::MulIOp::create(b, loc,
                                    arith::ShRUIOp::create(b, loc, aIndex, i32Const(b, loc, 1)),
                                    i32Const(b, loc, 8))));
      Value keep = i32Const(b, loc, ~(3 << 2) & (hopper::kWarpThreads - 1));
      // Element index of (row offset, column offset) in the thread's vector.
      DenseMap<std::pair<int64_t, int64_t>, int64_t> at;
      for (auto [i, off] : llvm::enumerate(te.offsets))
        at[{off[0], off[1]}] = i;
      // Row half by row half: its groups transposed, then instruction k of
      // every group, so that one row index and address is live at a time.
      llvm::MapVector<int64_t, SmallVector<int64_t>> groupsByRow;
      for (auto [i, off] : llvm::enumerate(te.offsets))
        if (off[1] % kLineColumns == 0 && i % te.vector == 0)
          groupsByRow[off[0]].push_back(off[1]);
      for (auto &[rowOffset, groupCols] : groupsByRow) {
        SmallVector<SmallVector<Value, 4>> t;
        for (int64_t col0 : groupCols) {
          SmallVector<Value, 4> m;
          for (int64_t c : {0, 1, 8, 9})
            m.push_back(scaled(at.lookup({rowOffset, col0 + c})));
          // xor 8 exchanges the values of the other half of the columns ...
          SmallVector<Value, 4> n(4);
          for (int64_t v0 = 0; v0 < 2; ++v0)
            std::tie(n[v0], n[2 + v0]) = transposeLanes(a1, 8, m[v0], m[2 + v0]);
          // ... and xor 4 those of the other column of each pair.
          SmallVector<Value, 4> &g = t.emplace_back(4);
          for (int64_t k1 = 0; k1 < 2; ++k1)
            std::tie(g[2 * k1], g[2 * k1 + 1]) =
                transposeLanes(a0, 4, n[2 * k1], n[2 * k1 + 1]);
        }
        Value own = rowAt(rowOffset);
        for (int64_t k = 0; k < 4; ++k) {
          Value src = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, lane, keep),
                                           i32Const(b, loc, 4 * k));
          Value row = gpu::ShuffleOp::create(b, loc, own, src, width, gpu::ShuffleMode::IDX)
                          .getShuffleResult();
          Value valid = validI32(row);
          Value rowStart = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, row), pitch),
              toI64(b, loc, arith::AddIOp::create(b, loc, column, lineCol)));
          for (auto [col0, g] : llvm::zip(groupCols, t))
            addFixed(elementPointer(rowStart, col0), g[k], valid);
        }
      }
    }

    /// Whether element i, scaled to `x`, converts: unordered compares, so
    /// NaN is lost too.
    void noteLost(int64_t i, Value x) {
      Value bad = arith::OrIOp::create(
          b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE, x, limit),
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ULE, x, minusLimit));
      Value &lost = lostByRow[te.offsets[i][0]];
      lost = lost ? arith::OrIOp::create(b, loc, lost, bad).getResult() : bad;
    }

    /// One flag per row the thread holds, after its additions.
    void flagLostRows(Value overflow) {
      Value flags = globalBasePointer(b, loc, overflow);
      for (auto &[rowOffset, lost] : lostByRow) {
        Value row = rowAt(rowOffset);
        Value inRange =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, i32Const(b, loc, 0));
        Value ptr = LLVM::GEPOp::create(b, loc, flags.getType(), b.getI32Type(), flags,
                                        ValueRange{toI64(b, loc, row)});
        Value flag = arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                            arith::AndIOp::create(b, loc, inRange, lost));
        emitPtx(b, loc, {ptr, flag},
                "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p red.relaxed.gpu.global.or.b32 [$0], 1; }",
                "l,r");
      }
    }

    /// Any layout: each run of the thread as it comes.
    void runs() {
      for (Run &run : runsOf(b, loc, type.getLayout(), te)) {
        RowRun r{rowAt(run.offsets[0]), run.coords[1], {}};
        for (unsigned k = 0; k < te.vector; ++k)
          r.values.push_back(element(run.first + k));
        add(r);
      }
    }

    /// An mma thread holds pairs of columns in rows r and r + 8; its lane
    /// neighbour (lane ^ 1) the next pair of the same rows. One exchange
    /// gives the even lane four columns of row r and the odd lane four of
    /// row r + 8, so every reduction is a 16-byte v4.
    void mmaPairs() {
      SmallVector<Run> runs = runsOf(b, loc, type.getLayout(), te);
      Value odd = laneBit(1);
      // The odd lane's four columns start two before its own pair.
      Value colBase = arith::SubIOp::create(
          b, loc, runs.front().base[1], pick(odd, i32Const(b, loc, 2), i32Const(b, loc, 0)));
      // runsOf lists an mma tile's runs as (row r, row r + 8) pairs.
      for (size_t p = 0; p + 1 < runs.size(); p += 2) {
        const Run &top = runs[p], &bottom = runs[p + 1];
        assert(bottom.offsets[0] == top.offsets[0] + 8 &&
               bottom.offsets[1] == top.offsets[1] && "mma runs come in row pairs");
        auto [c0, c2] = transposeLanes(odd, 1, element(top.first), element(bottom.first));
        auto [c1, c3] = transposeLanes(odd, 1, element(top.first + 1), element(bottom.first + 1));
        Value col = arith::AddIOp::create(b, loc, colBase, i32Const(b, loc, top.offsets[1]));
        add({pick(odd, rowAt(bottom.offsets[0]), rowAt(top.offsets[0])), col, {c0, c1, c2, c3}});
      }
    }

    /// Into an interleaved destination an mma thread's pairs of columns
    /// 8h + 2q (h = 0, 1) of a row are adjacent: one 16-byte run each,
    /// straight from the registers (traded into 128-byte runs by
    /// `tradedQuads`). Other layouts add their pieces as they come.
    void interleaved() {
      SmallVector<InterleavedPiece> pieces = interleavedPieces(b, loc, type);
      bool mma = isa<MmaLayoutAttr>(type.getLayout());
      // mma: the thread's 16-byte runs by their (row, column) offsets.
      llvm::MapVector<std::pair<int64_t, int64_t>, RowRun> quads;
      for (size_t i = 0; i < pieces.size(); ++i) {
        const InterleavedPiece &p = pieces[i];
        RowRun r{rowAt(p.rowOffset), p.col, {}};
        for (unsigned k = 0; k < p.count; ++k)
          r.values.push_back(element(p.first + k));
        if (!mma) {
          add(r);
          continue;
        }
        ArrayRef<int64_t> offset = te.offsets[p.first];
        if (offset[1] % kInterleaveColumns != 0)
          continue; // added with its left partner
        // The pair 8 columns right of this one (same row).
        auto partner = llvm::find_if(pieces, [&](const InterleavedPiece &o) {
          return te.offsets[o.first][0] == offset[0] &&
                 te.offsets[o.first][1] == offset[1] + 8;
        });
        assert(partner != pieces.end() && "mma pairs come in 16-column groups");
        for (unsigned k = 0; k < partner->count; ++k)
          r.values.push_back(element(partner->first + k));
        quads.insert({{offset[0], offset[1]}, r});
      }
      tradedQuads(quads);
    }

    /// A quad of lanes holds a row, so a v4 from each adds a 64-byte run;
    /// runs of 128 bytes add 22% faster (bench/probes/scatter_probe.cu, quad
    /// against oct1). Lanes l and l ^ 4 hold rows r and r + 1: they trade
    /// one group of each pair of groups (32 columns), so that one reduction
    /// adds a whole pair of row r and the next one of row r + 1. All trades
    /// come first, so their latency overlaps.
    void tradedQuads(llvm::MapVector<std::pair<int64_t, int64_t>, RowRun> &quads) {
      Value odd;
      DenseMap<int64_t, Value> otherRows; // by row offset: the row of lane l ^ 4
      SmallVector<RowRun> traded;
      for (auto &[at, a] : quads) {
        if (at.second % (2 * kInterleaveColumns) != 0)
          continue; // the right group of a pair: traded with its left one
        auto right = quads.find({at.first, at.second + kInterleaveColumns});
        if (right == quads.end()) {
          add(a); // the last group of an odd number
          continue;
        }
        if (!odd)
          odd = laneBit(4);
        const RowRun &r1 = right->second;
        // The odd lane sends its left group, the even lane its right one;
        // then both add the even lane's row, then both the odd lane's.
        RowRun evenRow{nullptr, pick(odd, r1.col, a.col), {}}, oddRow = evenRow;
        for (auto [l, r] : llvm::zip(a.values, r1.values)) {
          auto [even, oddValue] = transposeLanes(odd, 4, l, r);
          evenRow.values.push_back(even);
          oddRow.values.push_back(oddValue);
        }
        Value &otherRow = otherRows[at.first];
        if (!otherRow)
          otherRow = xorShuffle(a.row, 4);
        evenRow.row = pick(odd, otherRow, a.row);
        oddRow.row = pick(odd, a.row, otherRow);
        traded.push_back(evenRow);
        traded.push_back(oddRow);
      }
      for (const RowRun &r : traded)
        add(r);
    }
  };
};

} // namespace

void sparse_mla::tile::populateScattersToNVVMPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScatterAddRowsLowering>(converter, patterns.getContext());
}
