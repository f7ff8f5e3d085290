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
  SmallVector<Value, 2> base;       // the thread's part (coords - offsets)
};

static SmallVector<Run> runsOf(OpBuilder &b, Location loc, Attribute layout,
                               const ThreadElements &te) {
  SmallVector<Value, 2> base = threadBaseCoords(b, loc, layout, te.rank);
  SmallVector<Run> runs;
  for (size_t i = 0; i < te.offsets.size(); i += te.vector) {
    Run run{static_cast<int64_t>(i), {}, {}, base};
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

  /// Coordinates of the element `k` places after `coords` along the
  /// innermost dimension (the direction of a thread's runs).
  static SmallVector<Value, 2> shifted(OpBuilder &b, Location loc,
                                       ArrayRef<Value> coords, int64_t k) {
    SmallVector<Value, 2> c(coords);
    if (k)
      c.back() = arith::AddIOp::create(b, loc, c.back(), i32Const(b, loc, k));
    return c;
  }

  /// Compares in 32 bits (coordinates and bounds are tensor dimensions,
  /// below 2^31): half the registers and instructions of 64-bit compares.
  Value inBounds(OpBuilder &b, Location loc, ArrayRef<Value> coords) {
    Value ok;
    for (size_t d = 0; d < bounds.size(); ++d) {
      Value i = arith::AddIOp::create(b, loc, toI32(b, loc, indices[firstTileDim + d]),
                                      coords[d]);
      Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                      toI32(b, loc, bounds[d]));
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
    Value pad = adaptor.getPad();
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      auto load = [&](OpBuilder &b, ArrayRef<Value> coords, unsigned n) -> Value {
        return LLVM::LoadOp::create(b, loc, accessType(elt, n),
                                    win.pointer(b, loc, elt, coords), n * bytes);
      };
      // In bounds or not, element by element.
      auto guarded = [&](OpBuilder &b, ArrayRef<Value> coords) -> Value {
        auto ifOp = scf::IfOp::create(b, loc, elt, win.inBounds(b, loc, coords), true);
        OpBuilder thenB = ifOp.getThenBodyBuilder();
        scf::YieldOp::create(thenB, loc, load(thenB, coords, 1));
        OpBuilder elseB = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(elseB, loc, pad);
        return ifOp.getResult(0);
      };
      Value v;
      if (!pad) {
        v = load(rewriter, run.coords, te.vector);
      } else if (te.vector == 1) {
        v = guarded(rewriter, run.coords);
      } else {
        // The whole run in bounds: one vector access; else one per element.
        Value all = win.inBounds(
            rewriter, loc, WindowAccess::shifted(rewriter, loc, run.coords, te.vector - 1));
        auto ifOp = scf::IfOp::create(rewriter, loc, runType, all, true);
        OpBuilder thenB = ifOp.getThenBodyBuilder();
        scf::YieldOp::create(thenB, loc, load(thenB, run.coords, te.vector));
        OpBuilder elseB = ifOp.getElseBodyBuilder();
        SmallVector<Value> parts;
        for (unsigned k = 0; k < te.vector; ++k)
          parts.push_back(guarded(elseB, WindowAccess::shifted(elseB, loc, run.coords, k)));
        scf::YieldOp::create(elseB, loc,
                             vector::FromElementsOp::create(elseB, loc,
                                                            cast<VectorType>(runType), parts)
                                 .getResult());
        v = ifOp.getResult(0);
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

/// A PTX instruction with side effects and no results.
static void emitPtx(OpBuilder &b, Location loc, ValueRange operands,
                    StringRef asmStr, StringRef constraints) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, operands, asmStr, constraints,
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::TailCallKind::None, LLVM::AsmDialectAttr{},
                            ArrayAttr{});
}

/// Emits `red.global.add` of `values` (f32) at `ptr`, widest vectors first
/// (v4 moves 16 bytes per instruction).
static void emitReductions(OpBuilder &b, Location loc, Value ptr,
                           ArrayRef<Value> values) {
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
    emitPtx(b, loc, operands, asmStr, constraints);
    done += n;
  }
}

static void writeRunsToShared(OpBuilder &b, Location loc, Value value,
                              RegTileType type, Value dstBase, SmemTileType dst);

/// `bar.sync 1 + w, 128`: the threads of the calling warpgroup w (barrier 0
/// is the CTA's).
static void warpgroupBarrier(OpBuilder &b, Location loc) {
  Value id = arith::AddIOp::create(b, loc, warpgroupIndex(b, loc), i32Const(b, loc, 1));
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32Const(b, loc, 128),
                          NVVM::BarrierReductionAttr{}, Value());
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
    SharedLayoutAttr layout = stage.getSharedLayout();
    if (!layout || layout.getSwizzle())
      return op.emitOpError("staging needs an unswizzled #tile.shared layout");
    // The warpgroup's earlier reductions have read the tile: it may be
    // written again.
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, 0, rewriter.getUnitAttr());
    warpgroupBarrier(rewriter, loc);
    writeRunsToShared(rewriter, loc, adaptor.getValue(), type, adaptor.getStaging(), stage);
    // Written by the threads, read by the async proxy.
    NVVM::FenceProxyOp::create(
        rewriter, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    warpgroupBarrier(rewriter, loc);

    ThreadElements rowsTe = *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    Value owner = ownerPredicate(rewriter, loc, rowsType.getLayout());
    Value base = globalBasePointer(rewriter, loc, adaptor.getDest());
    Value pitch = memrefDim(rewriter, loc, adaptor.getDest(), 1);
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

  /// Contiguous values a thread adds into one row.
  struct RowRun {
    Value row;                 // index into dest's rows (i32, < 0: skip)
    Value col;                 // column within the tile (i32)
    SmallVector<Value, 4> values;
  };

  LogicalResult
  matchAndRewrite(ScatterAddRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getStaging())
      return lowerStaged(op, adaptor, rewriter);
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getValue().getType());
    auto rowsType = cast<RegTileType>(op.getRows().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    ThreadElements rowsTe =
        *getThreadElements(rowsType.getLayout(), rowsType.getShape());
    Value value = adaptor.getValue();
    auto element = [&](int64_t i) -> Value {
      return vector::ExtractOp::create(rewriter, loc, value, i);
    };
    auto rowOf = [&](const Run &run) -> Value {
      return vector::ExtractOp::create(rewriter, loc, adaptor.getRows(),
                                       slicePosition(rowsTe, run.offsets[0]));
    };
    Value base = globalBasePointer(rewriter, loc, adaptor.getDest());
    Value pitch = memrefDim(rewriter, loc, adaptor.getDest(), 1);
    Value column = toI32(rewriter, loc, adaptor.getColumn());
    // Each run is added as soon as it is formed, so few values are live.
    auto add = [&](const RowRun &r) {
      Value valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                          r.row, i32Const(rewriter, loc, 0));
      Value linear = arith::AddIOp::create(
          rewriter, loc,
          arith::MulIOp::create(rewriter, loc, toI64(rewriter, loc, r.row), pitch),
          toI64(rewriter, loc, arith::AddIOp::create(rewriter, loc, column, r.col)));
      ifThen(rewriter, loc, valid, [&](OpBuilder &b) {
        Value ptr = LLVM::GEPOp::create(b, loc, base.getType(), b.getF32Type(),
                                        base, ValueRange{linear});
        emitReductions(b, loc, ptr, r.values);
      });
    };
    SmallVector<Run> runs = runsOf(rewriter, loc, type.getLayout(), te);
    if (isa<MmaLayoutAttr>(type.getLayout())) {
      // An mma thread holds pairs of columns in rows r and r + 8; its lane
      // neighbour (lane ^ 1) the next pair of the same rows. One exchange
      // gives the even lane four columns of row r and the odd lane four of
      // row r + 8, so every reduction is a 16-byte v4.
      Value tid = threadInWarpgroup(rewriter, loc);
      Value odd = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(rewriter, loc, tid, i32Const(rewriter, loc, 1)),
          i32Const(rewriter, loc, 0));
      auto pick = [&](Value ifOdd, Value ifEven) -> Value {
        return arith::SelectOp::create(rewriter, loc, odd, ifOdd, ifEven);
      };
      // The odd lane's four columns start two before its own pair.
      Value colBase = arith::SubIOp::create(
          rewriter, loc, runs.front().base[1],
          pick(i32Const(rewriter, loc, 2), i32Const(rewriter, loc, 0)));
      Value width = i32Const(rewriter, loc, 32), one = i32Const(rewriter, loc, 1);
      // runsOf lists an mma tile's runs as (row r, row r + 8) pairs.
      for (size_t p = 0; p + 1 < runs.size(); p += 2) {
        const Run &top = runs[p], &bottom = runs[p + 1];
        assert(bottom.offsets[0] == top.offsets[0] + 8 &&
               bottom.offsets[1] == top.offsets[1] && "mma runs come in row pairs");
        Value t0 = element(top.first), t1 = element(top.first + 1);
        Value b0 = element(bottom.first), b1 = element(bottom.first + 1);
        SmallVector<Value, 2> got;
        for (auto [ifOdd, ifEven] : {std::pair{t0, b0}, std::pair{t1, b1}})
          got.push_back(gpu::ShuffleOp::create(rewriter, loc, pick(ifOdd, ifEven),
                                               one, width, gpu::ShuffleMode::XOR)
                            .getShuffleResult());
        Value col = arith::AddIOp::create(rewriter, loc, colBase,
                                          i32Const(rewriter, loc, top.offsets[1]));
        add({pick(rowOf(bottom), rowOf(top)), col,
             {pick(got[0], t0), pick(got[1], t1), pick(b0, got[0]),
              pick(b1, got[1])}});
      }
    } else {
      for (Run &run : runs) {
        RowRun r{rowOf(run), run.coords[1], {}};
        for (unsigned k = 0; k < te.vector; ++k)
          r.values.push_back(element(run.first + k));
        add(r);
      }
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

/// Whether every thread's runs of `layout` start in the first 16-byte chunk
/// of their row: base column bytes plus the run stay below 16.
static bool runsStartInFirstChunk(Attribute layout, unsigned elementBytes,
                                  unsigned vector) {
  BaseTerm col = getBaseTerms(layout, 2)[1];
  int64_t steps = col.modulus ? col.modulus - 1 : 127 / col.divisor;
  int64_t maxCol = steps * col.scale + 3 * col.warpScale;
  return (maxCol + vector) * elementBytes <= 16;
}

/// Shared-memory address of each run of a register tile (in `regLayout`,
/// runs of `vector` elements) in a shared tile. Where possible the address
/// is the thread's base address, XORed with a constant that moves 16-byte
/// chunks inside the swizzle row, plus a constant that moves whole swizzle
/// atoms: one register per thread and at most one instruction per access,
/// instead of a register per run. Else it is computed in full.
static Value sharedRunPointer(OpBuilder &b, Location loc, Value base,
                              SmemTileType type, const Run &run,
                              Attribute regLayout, unsigned vector) {
  SharedLayoutAttr layout = type.getSharedLayout();
  unsigned e = getElementBytes(type.getElementType());
  int64_t dr = run.offsets[0], dc = run.offsets[1] * e;
  auto fromBase = [&](int64_t chunkXor, int64_t delta) {
    Value off = sharedByteOffset(b, loc, layout, e, run.base[0], run.base[1]);
    if (chunkXor)
      off = arith::XOrIOp::create(b, loc, off, i32Const(b, loc, chunkXor));
    if (delta)
      off = arith::AddIOp::create(b, loc, off, i32Const(b, loc, delta));
    return bytePointer(b, loc, base, off);
  };
  unsigned s = layout.getSwizzle();
  if (!s) // unswizzled rows: offsets are linear
    return fromBase(0, dr * layout.getPitch() + dc);
  // The swizzle XORs the chunk bits (4..) with the line bits (7..) of the
  // offset. A delta that is a multiple of 8 swizzle rows leaves both alone;
  // a chunk move XORs in if the base has no chunk bits (its runs start in
  // the first chunk of a row and rows are whole swizzle rows).
  int64_t inRow = dc % s;
  int64_t delta = (dc / s) * layout.getBlockStride() + dr * layout.getPitch();
  bool xorable = inRow == 0 || (inRow % 16 == 0 && layout.getPitch() % s == 0 &&
                                runsStartInFirstChunk(regLayout, e, vector));
  if (delta % (8 * s) == 0 && xorable)
    return fromBase(inRow, delta);
  Value off = sharedByteOffset(b, loc, layout, e, run.coords[0], run.coords[1]);
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
      Value ptr = sharedRunPointer(rewriter, loc, adaptor.getSource(), src, run,
                                   type.getLayout(), te.vector);
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
    writeRunsToShared(rewriter, op.getLoc(), adaptor.getValue(),
                      cast<RegTileType>(op.getValue().getType()), adaptor.getDest(),
                      cast<SmemTileType>(op.getDest().getType()));
    rewriter.eraseOp(op);
    return success();
  }
};

/// Stores the thread's elements of `value` (a register tile of `type`) into
/// the shared tile at `dstBase`, converting f32 to its element type.
static void writeRunsToShared(OpBuilder &b, Location loc, Value value,
                              RegTileType type, Value dstBase, SmemTileType dst) {
  ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
  Type to = dst.getElementType();
  unsigned bytes = getElementBytes(to);
  for (Run &run : runsOf(b, loc, type.getLayout(), te)) {
    Value v = extractRun(b, loc, value, run.first, te.vector);
    if (to != type.getElementType())
      v = arith::TruncFOp::create(b, loc, accessType(to, te.vector), v);
    Value ptr = sharedRunPointer(b, loc, dstBase, dst, run, type.getLayout(), te.vector);
    LLVM::StoreOp::create(b, loc, v, ptr, te.vector * bytes);
  }
}

/// Warpgroups of the CTA that runs `op` (from its gpu.func's block size).
static int64_t warpgroupsOf(Operation *op) {
  auto func = op->getParentOfType<gpu::GPUFuncOp>();
  std::optional<ArrayRef<int32_t>> size =
      func ? func.getKnownBlockSize() : std::nullopt;
  return size && !size->empty() ? std::max<int64_t>(1, (*size)[0] / 128) : 1;
}

/// cp.async of 16-byte chunks into a shared tile; `source` gives, for each
/// chunk, the global pointer to read and whether to read it at all. Shared
/// tiles belong to the CTA, so its warpgroups split the chunks: warpgroup w
/// copies every W-th run of the coalesced layout, starting at run w.
static void emitAsyncCopy(
    ConversionPatternRewriter &rewriter, Location loc, Operation *op,
    SmemTileType dst, Value dstBase, BlockedLayoutAttr layout,
    function_ref<std::pair<Value, Value>(OpBuilder &, const Run &)> source) {
  ThreadElements te = *getThreadElements(layout, dst.getShape());
  int64_t groups = warpgroupsOf(op);
  Value wg;
  if (groups > 1)
    wg = warpgroupIndex(rewriter, loc);
  SmallVector<Run> runs = runsOf(rewriter, loc, layout, te);
  for (auto [i, run] : llvm::enumerate(runs)) {
    Value mine;
    if (groups > 1)
      mine = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, wg,
                                   i32Const(rewriter, loc, i % groups));
    Value dstPtr =
        sharedRunPointer(rewriter, loc, dstBase, dst, run, layout, te.vector);
    ifThen(rewriter, loc, mine, [&](OpBuilder &b) {
      auto [ptr, valid] = source(b, run);
      Value size = arith::SelectOp::create(b, loc, valid, i32Const(b, loc, 16),
                                           i32Const(b, loc, 0));
      NVVM::CpAsyncOp::create(b, loc, dstPtr, ptr, 16u,
                              NVVM::LoadCacheModifierKind::CG, size);
    });
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
    BlockedLayoutAttr layout = getCoalescedLayout(
        getContext(), dst.getShape(), getElementBytes(dst.getElementType()));
    if (!layout)
      return op.emitOpError("cannot spread ") << dst << " over 128 threads";
    Type elt = dst.getElementType();
    SmallVector<Value> bounds;
    if (adaptor.getBound())
      bounds.push_back(adaptor.getBound());
    WindowAccess win(rewriter, loc, adaptor.getSource(), adaptor.getIndices(),
                     bounds, 2);
    emitAsyncCopy(rewriter, loc, op, dst, adaptor.getDest(), layout,
                  [&](OpBuilder &b, const Run &run) -> std::pair<Value, Value> {
                    Value ptr = win.pointer(b, loc, elt, run.coords);
                    Value ok = win.inBounds(b, loc, run.coords);
                    if (!ok)
                      return {ptr, arith::ConstantIntOp::create(b, loc, 1, 1)};
                    // Masked rows read nothing; point them at the base anyway.
                    ptr = arith::SelectOp::create(b, loc, ok, ptr, win.base);
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
    // The chunks are spread like the rows whose indices a thread holds.
    auto rowsLayout = dyn_cast<SliceLayoutAttr>(rowsType.getLayout());
    auto layout = rowsLayout ? dyn_cast<BlockedLayoutAttr>(rowsLayout.getParent())
                             : BlockedLayoutAttr();
    if (!layout || rowsLayout.getDim() != 1 ||
        layout.getVector() * getElementBytes(dst.getElementType()) != 16)
      return op.emitOpError("row indices need the rows of a 16-byte blocked "
                            "layout (run tile-assign-layouts)");
    Type elt = dst.getElementType();
    Value base = globalBasePointer(rewriter, loc, adaptor.getSource());
    Value pitch = memrefDim(rewriter, loc, adaptor.getSource(), 1);
    Value column = toI32(rewriter, loc, adaptor.getColumn());
    emitAsyncCopy(
        rewriter, loc, op, dst, adaptor.getDest(), layout,
        [&](OpBuilder &b, const Run &run) -> std::pair<Value, Value> {
          Value row = vector::ExtractOp::create(
              b, loc, adaptor.getRows(), slicePosition(rowsTe, run.offsets[0]));
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              row, i32Const(b, loc, 0));
          Value safeRow =
              arith::SelectOp::create(b, loc, valid, row, i32Const(b, loc, 0));
          Value linear = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, toI64(b, loc, safeRow), pitch),
              toI64(b, loc, arith::AddIOp::create(b, loc, column, run.coords[1])));
          Value ptr = LLVM::GEPOp::create(b, loc, base.getType(), elt, base,
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
    // Shared tiles written by threads may next be read by wgmma (the async
    // proxy): the fence orders the writes for it.
    NVVM::FenceProxyOp::create(
        rewriter, op.getLoc(), NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
    return success();
  }
};

/// Each thread ORs the elements it holds; `bar.red.or` combines the threads
/// of the CTA and hands every one the result.
struct AnyLowering : public OpConversionPattern<AnyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AnyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value mine = vector::ReductionOp::create(rewriter, loc, vector::CombiningKind::OR,
                                             adaptor.getPred());
    auto any = NVVM::BarrierOp::create(
        rewriter, loc, TypeRange{i32}, Value(), Value(),
        NVVM::BarrierReductionAttr::get(getContext(), NVVM::BarrierReduction::OR),
        arith::ExtUIOp::create(rewriter, loc, i32, mine));
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::ne,
                                               any.getRes(), i32Const(rewriter, loc, 0));
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateMemoryToNVGPUPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadLowering, StoreLowering, ScatterAddRowsLowering,
               AllocLowering, SliceLowering, ReadLowering, WriteLowering,
               AsyncCopyLowering, GatherRowsLowering, AsyncWaitLowering,
               BarrierLowering, AnyLowering>(converter, patterns.getContext());
}
