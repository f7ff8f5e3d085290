//===- MemoryToNVGPU.cpp - Tile memory ops to NVVM/LLVM -------------------===//
//
// Every access is generated per run of contiguous elements a thread holds
// (16 bytes for the coalesced layouts), at an address computed from the
// thread's base coordinates. Bounds turn into predicates around the access;
// masked rows of copies and gathers become zero-filling cp.async of 0 bytes
// from a safe address, so nothing out of bounds is ever dereferenced.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Element (or vector of `n` elements) type of an access.
static Type accessType(Type elt, unsigned n) {
  return n == 1 ? elt : VectorType::get({n}, elt);
}

/// One access of a window op: a run of elements at tile coordinates.
struct Run {
  int64_t first;                    // index of its first element
  SmallVector<Value, 2> coords;     // tile coordinates (i32)
  SmallVector<int64_t, 2> offsets;  // constant part of the coordinates
};

static SmallVector<Run> runsOf(OpBuilder &b, Location loc, Attribute layout,
                               const ThreadElements &te) {
  SmallVector<Value, 2> base = threadBaseCoords(b, loc, layout, te.rank);
  SmallVector<Run> runs;
  for (size_t i = 0; i < te.offsets.size(); i += te.vector) {
    Run run{static_cast<int64_t>(i), {}, {}};
    for (unsigned d = 0; d < te.rank; ++d) {
      run.offsets.push_back(te.offsets[i][d]);
      run.coords.push_back(arith::AddIOp::create(
          b, loc, base[d], i32Const(b, loc, te.offsets[i][d])));
    }
    runs.push_back(run);
  }
  return runs;
}

/// Pointer to the element of a global window at tile coordinates `coords`,
/// and the predicate that all bounded coordinates are inside their bounds.
struct WindowAccess {
  Value base;
  SmallVector<Value> strides;
  SmallVector<Value> indices; // i64
  SmallVector<Value> bounds;  // i64, empty when unbounded
  unsigned firstTileDim;

  WindowAccess(OpBuilder &b, Location loc, Value memref, ValueRange idx,
               ValueRange bnds, unsigned tileRank) {
    base = globalBasePointer(b, loc, memref);
    strides = rowMajorStrides(b, loc, memref);
    for (Value v : idx)
      indices.push_back(toI64(b, loc, v));
    for (Value v : bnds)
      bounds.push_back(toI64(b, loc, v));
    firstTileDim = indices.size() - tileRank;
  }

  Value pointer(OpBuilder &b, Location loc, Type elt, ArrayRef<Value> coords) {
    Value linear = i64Const(b, loc, 0);
    for (size_t d = 0; d < indices.size(); ++d) {
      Value i = indices[d];
      if (d >= firstTileDim)
        i = arith::AddIOp::create(b, loc, i, toI64(b, loc, coords[d - firstTileDim]));
      linear = arith::AddIOp::create(b, loc, linear,
                                     arith::MulIOp::create(b, loc, i, strides[d]));
    }
    return LLVM::GEPOp::create(b, loc, base.getType(), elt, base,
                               ValueRange{linear});
  }

  Value inBounds(OpBuilder &b, Location loc, ArrayRef<Value> coords) {
    Value ok;
    for (size_t d = 0; d < bounds.size(); ++d) {
      Value i = arith::AddIOp::create(b, loc, indices[firstTileDim + d],
                                      toI64(b, loc, coords[d]));
      Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                      bounds[d]);
      ok = ok ? arith::AndIOp::create(b, loc, ok, c) : c;
    }
    return ok;
  }
};

/// Scatters a loaded run into the thread's element list.
static void insertRun(OpBuilder &b, Location loc, SmallVectorImpl<Value> &elems,
                      Value run, int64_t first) {
  auto vt = dyn_cast<VectorType>(run.getType());
  if (!vt) {
    elems[first] = run;
    return;
  }
  for (int64_t i = 0; i < vt.getNumElements(); ++i)
    elems[first + i] = vector::ExtractOp::create(b, loc, run, i);
}

/// The run of `n` elements starting at `first` of a thread's vector.
static Value extractRun(OpBuilder &b, Location loc, Value vec, int64_t first,
                        unsigned n) {
  if (n == 1)
    return vector::ExtractOp::create(b, loc, vec, first);
  SmallVector<Value> elems;
  for (unsigned i = 0; i < n; ++i)
    elems.push_back(vector::ExtractOp::create(b, loc, vec, first + i));
  auto vt = VectorType::get({n}, cast<VectorType>(vec.getType()).getElementType());
  return vector::FromElementsOp::create(b, loc, vt, elems);
}

/// Runs `body` under `cond` (if any).
static void ifThen(OpBuilder &b, Location loc, Value cond,
                   function_ref<void(OpBuilder &)> body) {
  if (!cond)
    return body(b);
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder inner = ifOp.getThenBodyBuilder();
  body(inner);
}

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
    Type runType = accessType(elt, te.vector);
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      Value ptr = win.pointer(rewriter, loc, elt, run.coords);
      auto load = [&](OpBuilder &b) -> Value {
        return LLVM::LoadOp::create(b, loc, runType, ptr, te.vector * bytes);
      };
      Value v;
      if (Value ok = win.inBounds(rewriter, loc, run.coords)) {
        auto ifOp = scf::IfOp::create(rewriter, loc, runType, ok, true);
        OpBuilder thenB = ifOp.getThenBodyBuilder();
        scf::YieldOp::create(thenB, loc, load(thenB));
        OpBuilder elseB = ifOp.getElseBodyBuilder();
        Value pad = adaptor.getPad();
        if (te.vector > 1)
          pad = vector::BroadcastOp::create(elseB, loc, runType, pad);
        scf::YieldOp::create(elseB, loc, pad);
        v = ifOp.getResult(0);
      } else {
        v = load(rewriter);
      }
      insertRun(rewriter, loc, elems, v, run.first);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

/// For sliced tiles, the predicate of the one thread that writes each element.
static Value ownerPredicate(OpBuilder &b, Location loc, Attribute layout) {
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  if (!slice)
    return {};
  Value replica = evalBaseTerm(b, loc, threadInWarpgroup(b, loc),
                               getReplicaTerm(slice));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, replica,
                               i32Const(b, loc, 0));
}

static Value andOpt(OpBuilder &b, Location loc, Value a, Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return arith::AndIOp::create(b, loc, a, c);
}

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
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      Value ptr = win.pointer(rewriter, loc, elt, run.coords);
      Value v = extractRun(rewriter, loc, adaptor.getValue(), run.first, te.vector);
      Value cond = andOpt(rewriter, loc, owner, win.inBounds(rewriter, loc, run.coords));
      ifThen(rewriter, loc, cond, [&](OpBuilder &b) {
        LLVM::StoreOp::create(b, loc, v, ptr, te.vector * bytes);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct ScatterAddRowsLowering : public OpConversionPattern<ScatterAddRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterAddRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getValue().getType());
    auto rowsType = cast<RegTileType>(op.getRows().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    ThreadElements rowsTe =
        *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    Value base = globalBasePointer(rewriter, loc, adaptor.getDest());
    Value pitch = memrefDim(rewriter, loc, adaptor.getDest(), 1);
    Value column = toI64(rewriter, loc, adaptor.getColumn());
    auto ptrType = base.getType();
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      Value row = vector::ExtractOp::create(
          rewriter, loc, adaptor.getRows(), slicePosition(rowsTe, run.offsets[0]));
      Value valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                          row, i32Const(rewriter, loc, 0));
      Value linear = arith::AddIOp::create(
          rewriter, loc,
          arith::MulIOp::create(rewriter, loc, toI64(rewriter, loc, row), pitch),
          arith::AddIOp::create(rewriter, loc, column,
                                toI64(rewriter, loc, run.coords[1])));
      ifThen(rewriter, loc, valid, [&](OpBuilder &b) {
        Value ptr = LLVM::GEPOp::create(b, loc, ptrType, b.getF32Type(), base,
                                        ValueRange{linear});
        // Widest vector reductions first: v4 moves 16 bytes per instruction.
        for (unsigned done = 0; done < te.vector;) {
          unsigned n = te.vector - done >= 4 ? 4 : te.vector - done >= 2 ? 2 : 1;
          SmallVector<Value> operands{
              done ? LLVM::GEPOp::create(b, loc, ptrType, b.getF32Type(), ptr,
                                         ArrayRef<LLVM::GEPArg>{(int32_t)done})
                         .getResult()
                   : ptr};
          std::string asmStr = n == 1 ? "red.relaxed.gpu.global.add.f32 [$0], $1;"
                                      : "red.relaxed.gpu.global.add.v" +
                                            std::to_string(n) + ".f32 [$0], {";
          std::string constraints = "l";
          for (unsigned k = 0; k < n; ++k) {
            operands.push_back(vector::ExtractOp::create(
                b, loc, adaptor.getValue(), run.first + done + k));
            constraints += ",f";
            if (n > 1)
              asmStr += "$" + std::to_string(k + 1) + (k + 1 < n ? ", " : "");
          }
          if (n > 1)
            asmStr += "};";
          LLVM::InlineAsmOp::create(
              b, loc, TypeRange{}, operands, asmStr, constraints,
              /*has_side_effects=*/true, /*is_align_stack=*/false,
              LLVM::TailCallKind::None, LLVM::AsmDialectAttr{}, ArrayAttr{});
          done += n;
        }
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct AllocLowering : public OpConversionPattern<AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getOffset())
      return op.emitOpError("has no offset: run tile-allocate-shared first");
    Location loc = op.getLoc();
    Value base = sharedBasePointer(rewriter, loc);
    rewriter.replaceOp(op, bytePointer(rewriter, loc, base,
                                       i32Const(rewriter, loc, *op.getOffset())));
    return success();
  }
};

struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto src = cast<SmemTileType>(op.getSource().getType());
    SharedLayoutAttr layout = src.getSharedLayout();
    unsigned e = getElementBytes(src.getElementType());
    ValueRange offs = adaptor.getOffsets();
    Value off = i32Const(rewriter, loc, 0);
    if (src.getRank() == 3) {
      int64_t stageBytes = getSharedTileBytes(SmemTileType::get(
          src.getShape().drop_front(), src.getElementType(), layout));
      off = arith::MulIOp::create(rewriter, loc, toI32(rewriter, loc, offs[0]),
                                  i32Const(rewriter, loc, stageBytes));
    }
    // Slices keep whole atoms and column blocks, so the corner's offset is
    // the unswizzled one (column blocks of the swizzle width).
    auto noSwizzle = SharedLayoutAttr::get(getContext(), 0, layout.getPitch(),
                                           layout.getBlockStride());
    Value corner = sharedByteOffset(rewriter, loc, noSwizzle, e,
                                    toI32(rewriter, loc, offs[offs.size() - 2]),
                                    toI32(rewriter, loc, offs.back()));
    off = arith::AddIOp::create(rewriter, loc, off, corner);
    rewriter.replaceOp(op, bytePointer(rewriter, loc, adaptor.getSource(), off));
    return success();
  }
};

/// Shared-memory address of each run of a register tile in a shared tile.
static Value sharedRunPointer(OpBuilder &b, Location loc, Value base,
                              SmemTileType type, const Run &run) {
  Value off = sharedByteOffset(b, loc, type.getSharedLayout(),
                               getElementBytes(type.getElementType()),
                               run.coords[0], run.coords[1]);
  return bytePointer(b, loc, base, off);
}

struct ReadLowering : public OpConversionPattern<ReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getType());
    auto src = cast<SmemTileType>(op.getSource().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    auto vt = cast<VectorType>(getTypeConverter()->convertType(type));
    Type runType = accessType(type.getElementType(), te.vector);
    unsigned bytes = getElementBytes(type.getElementType());
    SmallVector<Value> elems(vt.getNumElements());
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      Value ptr = sharedRunPointer(rewriter, loc, adaptor.getSource(), src, run);
      Value v = LLVM::LoadOp::create(rewriter, loc, runType, ptr, te.vector * bytes);
      insertRun(rewriter, loc, elems, v, run.first);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

struct WriteLowering : public OpConversionPattern<WriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getValue().getType());
    auto dst = cast<SmemTileType>(op.getDest().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    Type to = dst.getElementType();
    unsigned bytes = getElementBytes(to);
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      Value v = extractRun(rewriter, loc, adaptor.getValue(), run.first, te.vector);
      if (to != type.getElementType())
        v = arith::TruncFOp::create(rewriter, loc, accessType(to, te.vector), v);
      Value ptr = sharedRunPointer(rewriter, loc, adaptor.getDest(), dst, run);
      LLVM::StoreOp::create(rewriter, loc, v, ptr, te.vector * bytes);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async of 16-byte chunks into a shared tile; `source` gives, for each
/// chunk, the global pointer to read and whether to read it at all.
static void emitAsyncCopy(
    ConversionPatternRewriter &rewriter, Location loc, SmemTileType dst,
    Value dstBase,
    function_ref<std::pair<Value, Value>(const Run &, int64_t)> source) {
  MLIRContext *ctx = rewriter.getContext();
  unsigned e = getElementBytes(dst.getElementType());
  BlockedLayoutAttr layout = getCoalescedLayout(ctx, dst.getShape(), e);
  ThreadElements te = *getThreadElements(layout, dst.getShape());
  Value sixteen = i32Const(rewriter, loc, 16), zero = i32Const(rewriter, loc, 0);
  for (Run &run : runsOf(rewriter, loc, layout, te)) {
    auto [ptr, valid] = source(run, run.first);
    Value dstPtr = sharedRunPointer(rewriter, loc, dstBase, dst, run);
    Value size = arith::SelectOp::create(rewriter, loc, valid, sixteen, zero);
    NVVM::CpAsyncOp::create(rewriter, loc, dstPtr, ptr, 16u,
                            NVVM::LoadCacheModifierKind::CG, size);
  }
  NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
}

struct AsyncCopyLowering : public OpConversionPattern<AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dst = cast<SmemTileType>(op.getDest().getType());
    if (!getCoalescedLayout(getContext(), dst.getShape(),
                            getElementBytes(dst.getElementType())))
      return op.emitOpError("cannot spread ") << dst << " over 128 threads";
    Type elt = dst.getElementType();
    SmallVector<Value> bounds;
    if (adaptor.getBound())
      bounds.push_back(adaptor.getBound());
    WindowAccess win(rewriter, loc, adaptor.getSource(), adaptor.getIndices(),
                     bounds, 2);
    emitAsyncCopy(rewriter, loc, dst, adaptor.getDest(),
                  [&](const Run &run, int64_t) -> std::pair<Value, Value> {
                    Value ptr = win.pointer(rewriter, loc, elt, run.coords);
                    Value ok = win.inBounds(rewriter, loc, run.coords);
                    if (!ok)
                      return {ptr, arith::ConstantIntOp::create(rewriter, loc, 1, 1)};
                    // Masked rows read nothing; point them at the base anyway.
                    ptr = arith::SelectOp::create(rewriter, loc, ok, ptr, win.base);
                    return {ptr, ok};
                  });
    rewriter.replaceOp(op, i32Const(rewriter, loc, 0));
    return success();
  }
};

struct GatherRowsLowering : public OpConversionPattern<GatherRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dst = cast<SmemTileType>(op.getDest().getType());
    auto rowsType = cast<RegTileType>(op.getRows().getType());
    ThreadElements rowsTe =
        *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    Type elt = dst.getElementType();
    Value base = globalBasePointer(rewriter, loc, adaptor.getSource());
    Value pitch = memrefDim(rewriter, loc, adaptor.getSource(), 1);
    Value column = toI64(rewriter, loc, adaptor.getColumn());
    emitAsyncCopy(
        rewriter, loc, dst, adaptor.getDest(),
        [&](const Run &run, int64_t) -> std::pair<Value, Value> {
          Value row = vector::ExtractOp::create(
              rewriter, loc, adaptor.getRows(),
              slicePosition(rowsTe, run.offsets[0]));
          Value valid = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::sge, row, i32Const(rewriter, loc, 0));
          Value safeRow = arith::SelectOp::create(rewriter, loc, valid, row,
                                                  i32Const(rewriter, loc, 0));
          Value linear = arith::AddIOp::create(
              rewriter, loc,
              arith::MulIOp::create(rewriter, loc, toI64(rewriter, loc, safeRow), pitch),
              arith::AddIOp::create(rewriter, loc, column,
                                    toI64(rewriter, loc, run.coords[1])));
          Value ptr = LLVM::GEPOp::create(rewriter, loc, base.getType(), elt, base,
                                          ValueRange{linear});
          return {ptr, valid};
        });
    rewriter.replaceOp(op, i32Const(rewriter, loc, 0));
    return success();
  }
};

struct AsyncWaitLowering : public OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncWaitGroupOp>(op, op.getPending());
    return success();
  }
};

struct BarrierLowering : public OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateMemoryToNVGPUPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadLowering, StoreLowering, ScatterAddRowsLowering,
               AllocLowering, SliceLowering, ReadLowering, WriteLowering,
               AsyncCopyLowering, GatherRowsLowering, AsyncWaitLowering,
               BarrierLowering>(converter, patterns.getContext());
}
