//===- RecordManifest.cpp - What the runtime needs to launch a kernel -----===//
//
// Records, on the module, one entry per tile.kernel: its name, threads,
// shared memory, cluster size, its variant's shape parameters, its grid
// (each dimension's work axes with their extents, its window, its CTAs) and
// its argument ABI (memrefs as the standard descriptor: rank, element type,
// stated extents, whether optional; scalars by type), every size as an
// expression of the arguments. sparse-mla-emit-kernels writes them as the
// JSON manifest that the runtime loads the kernels by, checks arguments
// against, and sizes buffers and grids from.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILERECORDMANIFESTPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

static std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// A size as the runtime evaluates it: an integer, a symbol
/// ({"arg": name} or {"arg": name, "dim": d}), or [op, lhs, rhs].
static Attribute sizeExpr(AffineExpr e, ArrayAttr symbols, Builder &b) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return b.getI64IntegerAttr(c.getValue());
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return symbols[s.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  StringRef op;
  switch (e.getKind()) {
  case AffineExprKind::Add: op = "add"; break;
  case AffineExprKind::Mul: op = "mul"; break;
  case AffineExprKind::FloorDiv: op = "floordiv"; break;
  case AffineExprKind::CeilDiv: op = "ceildiv"; break;
  default: op = "mod"; break;
  }
  return b.getArrayAttr({b.getStringAttr(op), sizeExpr(bin.getLHS(), symbols, b),
                         sizeExpr(bin.getRHS(), symbols, b)});
}

/// What the runtime needs to launch `kernel`: its arguments' names and ABI
/// in the standard memref-descriptor convention, threads and shared memory.
static DictionaryAttr kernelManifest(KernelOp kernel) {
  Builder b(kernel.getContext());
  ArrayAttr symbols = kernel.getSizeSymbolsAttr();
  auto size = [&](int64_t i) { return sizeExpr(kernel.getSize(i), symbols, b); };
  SmallVector<Attribute> args;
  ArrayAttr names = kernel.getArgNamesAttr();
  for (auto [i, t] : llvm::enumerate(kernel.getArgumentTypes())) {
    SmallVector<NamedAttribute> entry;
    entry.push_back(b.getNamedAttr("name", names[i]));
    if (auto m = dyn_cast<MemRefType>(t)) {
      entry.push_back(b.getNamedAttr("kind", b.getStringAttr("memref")));
      entry.push_back(b.getNamedAttr("rank", b.getI64IntegerAttr(m.getRank())));
      entry.push_back(b.getNamedAttr("dtype", b.getStringAttr(typeName(m.getElementType()))));
      // Each extent as the size stated, the type's static size, or "?"
      // where any will do.
      SmallVector<Attribute> extents;
      DenseI64ArrayAttr stated = kernel.getArgExtents(i);
      for (auto [d, n] : llvm::enumerate(m.getShape())) {
        if (stated && stated[d] >= 0)
          extents.push_back(size(stated[d]));
        else if (!ShapedType::isDynamic(n))
          extents.push_back(b.getI64IntegerAttr(n));
        else
          extents.push_back(b.getStringAttr("?"));
      }
      entry.push_back(b.getNamedAttr("extents", b.getArrayAttr(extents)));
      entry.push_back(b.getNamedAttr("optional", b.getBoolAttr(kernel.isArgOptional(i))));
    } else {
      entry.push_back(b.getNamedAttr("kind", b.getStringAttr("scalar")));
      entry.push_back(b.getNamedAttr("dtype", b.getStringAttr(typeName(t))));
    }
    args.push_back(b.getDictionaryAttr(entry));
  }
  // The variant's shape parameters (tile-specialize), for the runtime to pick.
  auto params = kernel->getAttrOfType<DictionaryAttr>(kParamsAttr);
  int64_t shared = 0;
  if (auto attr = kernel->getAttrOfType<IntegerAttr>(kSharedBytesAttr))
    shared = attr.getInt();
  // Each grid dimension: its axes (name, extent), its CTAs, and its
  // window's name and first item.
  SmallVector<Attribute> grid;
  if (ArrayAttr dims = kernel.getGridAttr()) {
    for (auto [a, count] : llvm::zip(dims, kernel.getGridCounts())) {
      auto dim = cast<DictionaryAttr>(a);
      SmallVector<Attribute> axes;
      for (auto [axis, e] : llvm::zip(dim.getAs<ArrayAttr>("axes"),
                                      dim.getAs<DenseI64ArrayAttr>("extents").asArrayRef()))
        axes.push_back(b.getDictionaryAttr(
            {b.getNamedAttr("name", axis), b.getNamedAttr("extent", size(e))}));
      SmallVector<NamedAttribute> entry{
          b.getNamedAttr("axes", b.getArrayAttr(axes)),
          b.getNamedAttr("count", sizeExpr(count, symbols, b))};
      if (auto slot = dim.getAs<StringAttr>("window"))
        entry.push_back(b.getNamedAttr(
            "window", b.getDictionaryAttr(
                          {b.getNamedAttr("name", slot),
                           b.getNamedAttr("from", size(dim.getAs<IntegerAttr>("from").getInt()))})));
      grid.push_back(b.getDictionaryAttr(entry));
    }
  }
  return b.getDictionaryAttr({
      b.getNamedAttr("grid", b.getArrayAttr(grid)),
      b.getNamedAttr("name", kernel.getSymNameAttr()),
      b.getNamedAttr("threads", b.getI64IntegerAttr(kernel.getNumThreads())),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(shared)),
      b.getNamedAttr("cluster", b.getI64IntegerAttr(kernel.getClusterSize())),
      b.getNamedAttr("args", b.getArrayAttr(args)),
      b.getNamedAttr("params", params ? params : b.getDictionaryAttr({})),
  });
}

struct TileRecordManifestPass
    : public sparse_mla::tile::impl::TileRecordManifestPassBase<TileRecordManifestPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Attribute> manifests;
    for (KernelOp kernel : module.getOps<KernelOp>())
      manifests.push_back(kernelManifest(kernel));
    if (!manifests.empty())
      module->setAttr(kKernelsManifestAttr, Builder(module.getContext()).getArrayAttr(manifests));
  }
};

} // namespace
