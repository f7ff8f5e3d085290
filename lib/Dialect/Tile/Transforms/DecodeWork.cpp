//===- DecodeWork.cpp - The CTA's work coordinates from its block ids ----===//
//
// A kernel declares its index space once, in `grid(...)`: each grid
// dimension a list of work axes with their extents (and a window of its
// work, for a launch that covers part of it). Each tile.work_id becomes,
// where it stands, the decode of that declaration: the block index of its
// dimension, plus the window's start, delinearized over the dimension's
// axes. The manifest records the same extents, from which the runtime sizes
// the grid, so host and device cannot disagree.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILEDECODEWORKPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Builds size expressions of `kernel` as i32 values at `b`'s point: CTA
/// ids are 32-bit, and the runtime keeps each dimension's work below 2^32,
/// so the decode needs no 64-bit division. Sizes are non-negative, so
/// divisions are unsigned.
struct SizeBuilder {
  KernelOp kernel;
  OpBuilder &b;
  Location loc;

  Value narrow(Value v) {
    if (v.getType().isInteger(32))
      return v;
    if (v.getType().isIndex())
      return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v);
    if (v.getType().getIntOrFloatBitWidth() > 32)
      return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
    return arith::ExtUIOp::create(b, loc, b.getI32Type(), v);
  }

  Value symbol(unsigned position) {
    auto key = cast<DictionaryAttr>(kernel.getSizeSymbolsAttr()[position]);
    ArrayAttr names = kernel.getArgNamesAttr();
    auto index = llvm::find(names, key.get("arg")) - names.begin();
    Value arg = kernel.getBody().getArgument(index);
    if (auto dim = key.getAs<IntegerAttr>("dim"))
      return narrow(memref::DimOp::create(b, loc, arg, dim.getInt()));
    return narrow(arg);
  }

  Value build(AffineExpr e) {
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return arith::ConstantIntOp::create(b, loc, b.getI32Type(), c.getValue());
    if (auto s = dyn_cast<AffineSymbolExpr>(e))
      return symbol(s.getPosition());
    auto bin = cast<AffineBinaryOpExpr>(e);
    Value lhs = build(bin.getLHS()), rhs = build(bin.getRHS());
    switch (e.getKind()) {
    case AffineExprKind::Add: return arith::AddIOp::create(b, loc, lhs, rhs);
    case AffineExprKind::Mul: return arith::MulIOp::create(b, loc, lhs, rhs);
    case AffineExprKind::FloorDiv: return arith::DivUIOp::create(b, loc, lhs, rhs);
    case AffineExprKind::CeilDiv: return arith::CeilDivUIOp::create(b, loc, lhs, rhs);
    default: return arith::RemUIOp::create(b, loc, lhs, rhs);
    }
  }
};

struct TileDecodeWorkPass
    : public sparse_mla::tile::impl::TileDecodeWorkPassBase<TileDecodeWorkPass> {
  using Base::Base;

  void runOnOperation() override {
    KernelOp kernel = getOperation();
    // A grid extent may name a shape parameter (`{hp}`), bound per variant.
    if (failed(requireSpecialized(kernel)))
      return signalPassFailure();
    kernel.walk([&](WorkIdOp work) {
      OpBuilder b(work);
      Location loc = work.getLoc();
      SizeBuilder sizes{kernel, b, loc};
      auto [d, position] = *kernel.findWorkAxis(work.getName());
      auto dim = cast<DictionaryAttr>(kernel.getGridAttr()[d]);
      ArrayRef<int64_t> extents = dim.getAs<DenseI64ArrayAttr>("extents").asArrayRef();
      Value block = BlockIdOp::create(b, loc, b.getIndexType(), static_cast<Dim>(d));
      if (position < 0) {   // the window's slot
        work.replaceAllUsesWith(block);
        work.erase();
        return;
      }
      Value linear = sizes.narrow(block);
      if (auto from = dim.getAs<IntegerAttr>("from"))
        linear = arith::AddIOp::create(b, loc, linear, sizes.build(kernel.getSize(from.getInt())));
      // Axis k of n: (linear / the inner axes' extents) mod its own; the
      // outermost needs no mod (the runtime keeps the grid in its work).
      AffineExpr inner = getAffineConstantExpr(1, kernel.getContext());
      for (int64_t e : extents.drop_front(position + 1))
        inner = inner * kernel.getSize(e);
      Value coordinate = linear;
      if (inner != getAffineConstantExpr(1, kernel.getContext()))
        coordinate = arith::DivUIOp::create(b, loc, coordinate, sizes.build(inner));
      if (position > 0)
        coordinate = arith::RemUIOp::create(b, loc, coordinate,
                                            sizes.build(kernel.getSize(extents[position])));
      coordinate = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), coordinate);
      work.replaceAllUsesWith(coordinate);
      work.erase();
    });
  }
};

} // namespace
