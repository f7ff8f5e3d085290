//===- LayoutCodegen.cpp - Which elements a thread holds, as IR -------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

Value sparse_mla::tile::threadInWarpgroup(OpBuilder &b, Location loc) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value t32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), tid);
  return arith::RemUIOp::create(b, loc, t32, i32Const(b, loc, hopper::kWarpgroupThreads));
}

Value sparse_mla::tile::warpgroupIndex(OpBuilder &b, Location loc) {
  Value tid = toI32(b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value wg = arith::DivUIOp::create(b, loc, tid, i32Const(b, loc, hopper::kWarpgroupThreads));
  // As CUTLASS does: what derives from a value ptxas knows to be uniform
  // (shared addresses, wgmma descriptors) lives in uniform registers.
  return gpu::ShuffleOp::create(b, loc, wg, i32Const(b, loc, 0), i32Const(b, loc, 32),
                                gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

Value sparse_mla::tile::evalBaseTerm(OpBuilder &b, Location loc, Value tid,
                                     const BaseTerm &t) {
  Value v = tid;
  if (t.divisor != 1)
    v = arith::DivUIOp::create(b, loc, v, i32Const(b, loc, t.divisor));
  if (t.modulus)
    v = arith::RemUIOp::create(b, loc, v, i32Const(b, loc, t.modulus));
  v = arith::MulIOp::create(b, loc, v, i32Const(b, loc, t.scale));
  if (t.warpScale) {
    Value warp = arith::DivUIOp::create(b, loc, tid, i32Const(b, loc, hopper::kWarpThreads));
    Value w = arith::MulIOp::create(b, loc, warp, i32Const(b, loc, t.warpScale));
    v = arith::AddIOp::create(b, loc, v, w);
  }
  return v;
}

SmallVector<Value, 2> sparse_mla::tile::threadBaseCoords(OpBuilder &b,
                                                         Location loc,
                                                         Attribute layout,
                                                         unsigned rank) {
  Value tid = threadInWarpgroup(b, loc);
  SmallVector<Value, 2> coords;
  for (const BaseTerm &t : getBaseTerms(layout, rank))
    coords.push_back(evalBaseTerm(b, loc, tid, t));
  return coords;
}

int64_t sparse_mla::tile::slicePosition(const ThreadElements &slice,
                                        int64_t coord) {
  for (auto [i, off] : llvm::enumerate(slice.offsets))
    if (off[0] == coord)
      return i;
  llvm_unreachable("coordinate not held by this thread");
}

/// Element (or vector of `n` elements) type of an access.
Type sparse_mla::tile::accessType(Type elt, unsigned n) {
  return n == 1 ? elt : VectorType::get({n}, elt);
}

SmallVector<Run> sparse_mla::tile::runsOf(OpBuilder &b, Location loc, Attribute layout,
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

/// Scatters a loaded run into the thread's element list.
void sparse_mla::tile::insertRun(OpBuilder &b, Location loc, SmallVectorImpl<Value> &elems,
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
Value sparse_mla::tile::extractRun(OpBuilder &b, Location loc, Value vec, int64_t first,
                        unsigned n) {
  if (n == 1)
    return vector::ExtractOp::create(b, loc, vec, first);
  SmallVector<Value> elems;
  for (unsigned i = 0; i < n; ++i)
    elems.push_back(vector::ExtractOp::create(b, loc, vec, first + i));
  auto vt = VectorType::get({n}, cast<VectorType>(vec.getType()).getElementType());
  return vector::FromElementsOp::create(b, loc, vt, elems);
}

/// For sliced tiles, the predicate of the one thread that writes each element.
Value sparse_mla::tile::ownerPredicate(OpBuilder &b, Location loc, Attribute layout) {
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  if (!slice)
    return {};
  Value replica = evalBaseTerm(b, loc, threadInWarpgroup(b, loc),
                               getReplicaTerm(slice));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, replica,
                               i32Const(b, loc, 0));
}

Value sparse_mla::tile::interleavedColumn(OpBuilder &b, Location loc, Value col) {
  static_assert(getInterleavedColumn(2) == 4 && getInterleavedColumn(8) == 2 &&
                getInterleavedColumn(23) == 29 && getInterleavedColumn(26) == 22 && kInterleaveColumns == 16,
                "the bit operations below spell getInterleavedColumn");
  auto bits = [&](Value v, int64_t mask) {
    return arith::AndIOp::create(b, loc, v, i32Const(b, loc, mask)).getResult();
  };
  Value groups = bits(col, ~int64_t(15));
  Value pair = arith::ShLIOp::create(b, loc, bits(col, 6), i32Const(b, loc, 1));
  Value half = bits(arith::ShRUIOp::create(b, loc, col, i32Const(b, loc, 2)), 2);
  Value r = arith::OrIOp::create(b, loc, groups, pair);
  r = arith::OrIOp::create(b, loc, r, half);
  return arith::OrIOp::create(b, loc, r, bits(col, 1));
}

SmallVector<InterleavedPiece> sparse_mla::tile::interleavedPieces(OpBuilder &b, Location loc,
                                                                  RegTileType type) {
  ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
  SmallVector<InterleavedPiece> pieces;
  unsigned step = te.vector >= 2 ? 2 : 1;
  for (Run &run : runsOf(b, loc, type.getLayout(), te))
    for (unsigned k = 0; k < te.vector; k += step) {
      Value col = arith::AddIOp::create(b, loc, run.coords[1], i32Const(b, loc, k));
      pieces.push_back({run.coords[0], interleavedColumn(b, loc, col), col, run.first + k,
                        step, run.offsets[0]});
    }
  return pieces;
}
