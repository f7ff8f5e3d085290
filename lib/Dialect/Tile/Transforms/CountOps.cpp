//===- CountOps.cpp - How often each CTA runs an op, for tests and profiles -===//
//
// Instrumentation stays out of the kernels: this pass, in the benchmark
// pipeline only, gives a kernel an optional argument `op_counts` ([CTAs, 1]
// i32, zeroed) and counts there how often each CTA runs the first op of the
// given name (in program order; one count per warpgroup that runs it). In
// the backward, the first tile.gemm is the scores' GEMM, which the scores
// warpgroup runs once per block of keys it computes: the count shows which
// blocks were skipped. CTAs are numbered in launch order (x fastest).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILECOUNTOPSPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

constexpr llvm::StringLiteral kCountsArg = "op_counts";

struct TileCountOpsPass : public sparse_mla::tile::impl::TileCountOpsPassBase<TileCountOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (op.empty())
      return;
    Operation *first = nullptr;
    kernel.getBody().walk<WalkOrder::PreOrder>([&](Operation *o) {
      if (o->getName().getStringRef() != op)
        return WalkResult::advance();
      first = o;
      return WalkResult::interrupt();
    });
    if (!first)
      return;
    if (llvm::is_contained(kernel.getArgNamesAttr(), StringAttr::get(&getContext(), kCountsArg))) {
      kernel.emitOpError("already has an argument named '") << kCountsArg << "'";
      return signalPassFailure();
    }
    Value counts = addArgument(kernel);
    OpBuilder b(first->getContext());
    b.setInsertionPointAfter(first);
    Location loc = first->getLoc();
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value given = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        memref::DimOp::create(b, loc, counts, 0), c0);
    auto ifGiven = scf::IfOp::create(b, loc, given, /*withElseRegion=*/false);
    OpBuilder t = ifGiven.getThenBodyBuilder();
    Value cta;
    for (Dim d : {Dim::z, Dim::y, Dim::x}) {
      Value id = BlockIdOp::create(t, loc, t.getIndexType(), d);
      cta = cta ? arith::AddIOp::create(
                      t, loc,
                      arith::MulIOp::create(t, loc, cta,
                                            GridDimOp::create(t, loc, t.getIndexType(), d)),
                      id)
                : id;
    }
    CounterAddOp::create(t, loc, counts, cta, arith::ConstantIndexOp::create(t, loc, 0),
                         arith::ConstantIntOp::create(t, loc, t.getI32Type(), 1));
  }

  /// Appends `op_counts: memref<?x?xi32> [CTAs, 1] optional` (any rows where
  /// the kernel declares no grid).
  Value addArgument(KernelOp kernel) {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    SmallVector<int64_t> extents{-1, -1};
    if (kernel.getGridAttr()) {
      AffineExpr ctas = getAffineConstantExpr(1, ctx);
      for (AffineExpr count : kernel.getGridCounts())
        ctas = ctas * count;
      AffineMap sizes = *kernel.getSizes();
      SmallVector<AffineExpr> results(sizes.getResults());
      extents = {int64_t(results.size()), int64_t(results.size() + 1)};
      results.push_back(ctas);
      results.push_back(getAffineConstantExpr(1, ctx));
      kernel.setSizesAttr(
          AffineMapAttr::get(AffineMap::get(0, sizes.getNumSymbols(), results, ctx)));
    }
    NamedAttrList attrs;
    if (extents[0] >= 0)
      attrs.set(kExtentsAttr, b.getDenseI64ArrayAttr(extents));
    attrs.set(kOptionalAttr, b.getUnitAttr());
    unsigned index = kernel.getNumArguments();
    auto type = MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, b.getI32Type());
    if (failed(kernel.insertArgument(index, type, attrs.getDictionary(ctx), kernel.getLoc())))
      llvm_unreachable("a kernel takes any number of arguments");
    SmallVector<Attribute> names(kernel.getArgNamesAttr().getValue());
    names.push_back(b.getStringAttr(kCountsArg));
    kernel.setArgNamesAttr(b.getArrayAttr(names));
    return kernel.getArgument(index);
  }
};

} // namespace
