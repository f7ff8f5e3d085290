//===- GlobalMemoryToNVVM.cpp - Tile global-memory windows to LLVM -------===//
//
// Every access is generated per run of contiguous elements a thread holds
// (16 bytes for the coalesced layouts), at an address computed from the
// thread's base coordinates. Bounds turn into predicates around the access,
// so nothing out of bounds is ever dereferenced.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct LoadLowering : public OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    auto vt = cast<VectorType>(getTypeConverter()->convertType(type));
    Type elt = type.getElementType();
    unsigned bytes = getElementBytes(elt);
    WindowAccess win(rewriter, loc, adaptor.getSource(), adaptor.getIndices(),
                     adaptor.getBounds(), type.getRank());
    SmallVector<Value> elems(vt.getNumElements());
    Value pad = adaptor.getPad();
    auto load = [&](OpBuilder &b, ArrayRef<Value> coords, unsigned n) -> Value {
      return LLVM::LoadOp::create(b, loc, accessType(elt, n), win.pointer(b, loc, elt, coords),
                                  n * bytes);
    };
    // `n` contiguous elements stored from `stored`, bounded by their tile
    // coordinates from `logical`: with a pad, one access if all are in
    // bounds, else one per element under its own check.
    auto read = [&](ArrayRef<Value> logical, ArrayRef<Value> stored, unsigned n) -> Value {
      if (!pad)
        return load(rewriter, stored, n);
      auto guarded = [&](OpBuilder &b, unsigned k) -> Value {
        auto ifOp = scf::IfOp::create(
            b, loc, elt, win.inBounds(b, loc, WindowAccess::shifted(b, loc, logical, k)), true);
        OpBuilder thenB = ifOp.getThenBodyBuilder();
        scf::YieldOp::create(thenB, loc,
                             load(thenB, WindowAccess::shifted(thenB, loc, stored, k), 1));
        OpBuilder elseB = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseB, loc, pad);
        return ifOp.getResult(0);
      };
      if (n == 1)
        return guarded(rewriter, 0);
      Type runType = accessType(elt, n);
      Value all = win.inBounds(rewriter, loc, WindowAccess::shifted(rewriter, loc, logical, n - 1));
      auto ifOp = scf::IfOp::create(rewriter, loc, runType, all, true);
      OpBuilder thenB = ifOp.getThenBodyBuilder();
      scf::YieldOp::create(thenB, loc, load(thenB, stored, n));
      OpBuilder elseB = ifOp.getElseBodyBuilder();
      SmallVector<Value> parts;
      for (unsigned k = 0; k < n; ++k)
        parts.push_back(guarded(elseB, k));
      scf::YieldOp::create(
          elseB, loc,
          vector::FromElementsOp::create(elseB, loc, cast<VectorType>(runType), parts).getResult());
      return ifOp.getResult(0);
    };
    if (op.getInterleaved()) {
      // Pairs at their stored columns, bounded by their natural ones (the
      // matrix has whole 16-column groups, so a stored column is in the row).
      for (const InterleavedPiece &p : interleavedPieces(rewriter, loc, type))
        insertRun(rewriter, loc, elems,
                  read({p.row, p.logicalCol}, {p.row, p.col}, p.count), p.first);
    } else {
      for (Run &run : runsOf(rewriter, loc, type.getLayout(), te))
        insertRun(rewriter, loc, elems, read(run.coords, run.coords, te.vector), run.first);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

struct StoreLowering : public OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getValue().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    Type elt = type.getElementType();
    unsigned bytes = getElementBytes(elt);
    WindowAccess win(rewriter, loc, adaptor.getDest(), adaptor.getIndices(),
                     adaptor.getBounds(), type.getRank());
    Value owner = ownerPredicate(rewriter, loc, type.getLayout());
    auto storeIf = [&](OpBuilder &b, Value cond, Value v, ArrayRef<Value> coords,
                       unsigned n) {
      ifThen(b, loc, cond, [&](OpBuilder &bb) {
        LLVM::StoreOp::create(bb, loc, v, win.pointer(bb, loc, elt, coords), n * bytes);
      });
    };
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      // Element by element: transposed runs are strided in memory.
      auto each = [&](OpBuilder &b) {
        for (unsigned k = 0; k < te.vector; ++k) {
          SmallVector<Value, 2> c = WindowAccess::shifted(b, loc, run.coords, k);
          if (op.getTranspose())
            std::swap(c[0], c[1]);
          Value v = vector::ExtractOp::create(b, loc, adaptor.getValue(), run.first + k);
          storeIf(b, andOpt(b, loc, owner, win.inBounds(b, loc, c)), v, c, 1);
        }
      };
      if (op.getTranspose() || (te.vector > 1 && !win.bounds.empty())) {
        if (op.getTranspose() || te.vector == 1) {
          each(rewriter);
          continue;
        }
        // The whole run in bounds: one vector access; else one per element.
        Value all = win.inBounds(
            rewriter, loc, WindowAccess::shifted(rewriter, loc, run.coords, te.vector - 1));
        auto ifOp = scf::IfOp::create(rewriter, loc, all, /*withElseRegion=*/true);
        OpBuilder thenB = ifOp.getThenBodyBuilder();
        storeIf(thenB, owner,
                extractRun(thenB, loc, adaptor.getValue(), run.first, te.vector),
                run.coords, te.vector);
        OpBuilder elseB = ifOp.getElseBodyBuilder();
        each(elseB);
        continue;
      }
      storeIf(rewriter, andOpt(rewriter, loc, owner, win.inBounds(rewriter, loc, run.coords)),
              extractRun(rewriter, loc, adaptor.getValue(), run.first, te.vector),
              run.coords, te.vector);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// Row by row into rows picked by index: a run of a row at once; a
/// transposed tile (runs go down the destination's rows) element by element.
struct StoreRowsLowering : public OpConversionPattern<StoreRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getValue().getType());
    auto rowsType = cast<RegTileType>(op.getRows().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    ThreadElements rowsTe = *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    Type elt = type.getElementType();
    unsigned bytes = getElementBytes(elt);
    Value base = globalBasePointer(rewriter, loc, adaptor.getDest());
    Value pitch = rowPitch(rewriter, loc, adaptor.getDest());
    Value column = toI64(rewriter, loc, adaptor.getColumn());
    Value owner = ownerPredicate(rewriter, loc, type.getLayout());
    // Writes `v` (n elements) at column `col` of the row held at `rowOffset`
    // of the index tile.
    auto store = [&](Value v, unsigned n, int64_t rowOffset, Value col) {
      Value row = vector::ExtractOp::create(rewriter, loc, adaptor.getRows(),
                                            slicePosition(rowsTe, rowOffset));
      Value ok = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, row,
                                       i32Const(rewriter, loc, 0));
      ifThen(rewriter, loc, andOpt(rewriter, loc, owner, ok), [&](OpBuilder &b) {
        Value linear = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, row), pitch),
            arith::AddIOp::create(b, loc, column, toI64(b, loc, col)));
        Value ptr = LLVM::GEPOp::create(b, loc, base.getType(), elt, base, ValueRange{linear});
        LLVM::StoreOp::create(b, loc, v, ptr, n * bytes);
      });
    };
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      if (!op.getTranspose()) {
        store(extractRun(rewriter, loc, adaptor.getValue(), run.first, te.vector),
              te.vector, run.offsets[0], run.coords[1]);
        continue;
      }
      for (unsigned k = 0; k < te.vector; ++k)
        store(vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), run.first + k), 1,
              run.offsets[1] + k, run.coords[0]);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateGlobalMemoryToNVVMPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadLowering, StoreLowering, StoreRowsLowering>(converter,
                                                              patterns.getContext());
}
