//===- Specialize.cpp - One kernel per variant of its shape parameters ----===//
//
// A generic kernel names some of its sizes (`{hw}` in tile types,
// `tile.param "hw"` for values) so that one source serves every shape it is
// compiled for. Each variant becomes a clone with the parameters replaced by
// its integers; the clone is then an ordinary kernel for the later passes.
// A parameter may also choose code (`scf.if` on `tile.param "det" : i1`):
// each variant keeps only the branch it takes.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"

namespace sparse_mla::tile {
#define GEN_PASS_DEF_TILESPECIALIZEPASS
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// `name_k1v1_k2v2`: the variant's bindings in their (sorted) order, but
/// the constants, which every variant shares.
static std::string variantName(KernelOp kernel, DictionaryAttr variant,
                               DictionaryAttr constants) {
  std::string name = kernel.getSymName().str();
  for (NamedAttribute binding : variant)
    if (!constants || !constants.contains(binding.getName()))
      name += "_" + binding.getName().str() +
              std::to_string(cast<IntegerAttr>(binding.getValue()).getInt());
  return name;
}

/// `type` with its shape parameters bound, or null (after a diagnostic at
/// `loc`) where the sizes make no valid tile (too large, say).
template <typename T>
static T bind(T type, DictionaryAttr variant, Location loc) {
  if (type.getSymbols().empty())
    return type;
  SmallVector<int64_t> shape(type.getShape());
  ArrayRef<StringAttr> symbols = type.getSymbols();
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d)) {
      d = variant.getAs<IntegerAttr>(symbols.front()).getInt();
      symbols = symbols.drop_front();
    }
  return T::getChecked([&] { return emitError(loc); }, type.getContext(), ArrayRef<int64_t>(shape),
                       type.getElementType(), type.getLayout(), ArrayRef<StringAttr>());
}

/// Replaces each `scf.if` on a constant (a bound parameter) by the branch
/// it takes, so that the later passes see the variant's code path alone.
static void keepBranchesTaken(KernelOp kernel) {
  IRRewriter rewriter(kernel.getContext());
  // Post-order: nested ifs are folded before the one around them.
  kernel.walk<WalkOrder::PostOrder>([&](scf::IfOp op) {
    BoolAttr taken;
    if (!matchPattern(op.getCondition(), m_Constant(&taken)))
      return;
    Region &region = taken.getValue() ? op.getThenRegion() : op.getElseRegion();
    if (region.empty()) {
      rewriter.eraseOp(op);
      return;
    }
    Block *block = &region.front();
    auto yield = cast<scf::YieldOp>(block->getTerminator());
    SmallVector<Value> results(yield.getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(block, op);
    rewriter.replaceOp(op, results);
  });
}

/// The size expressions' shape parameters become the variant's constants.
static void bindSizes(KernelOp kernel, DictionaryAttr variant) {
  AffineMapAttr sizes = kernel.getSizesAttr();
  if (!sizes)
    return;
  MLIRContext *ctx = kernel.getContext();
  SmallVector<AffineExpr> symbols;
  SmallVector<Attribute> kept;
  for (Attribute a : kernel.getSizeSymbolsAttr()) {
    auto symbol = cast<DictionaryAttr>(a);
    if (auto param = symbol.getAs<StringAttr>("param")) {
      symbols.push_back(getAffineConstantExpr(variant.getAs<IntegerAttr>(param).getInt(), ctx));
      continue;
    }
    symbols.push_back(getAffineSymbolExpr(kept.size(), ctx));
    kept.push_back(symbol);
  }
  AffineMap bound = sizes.getValue().replaceDimsAndSymbols({}, symbols, 0, kept.size());
  kernel.setSizesAttr(AffineMapAttr::get(simplifyAffineMap(bound)));
  kernel.setSizeSymbolsAttr(ArrayAttr::get(ctx, kept));
}

/// Replaces the shape parameters of `kernel` (a clone) by the variant's
/// values; fails where a bound type is not valid.
static LogicalResult bindParameters(KernelOp kernel, DictionaryAttr variant) {
  bool invalid = false;
  auto bound = [&](auto t) {
    auto b = bind(t, variant, kernel.getLoc());
    invalid |= !b;
    return b ? b : t;
  };
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](RegTileType t) { return bound(t); });
  replacer.addReplacement([&](SmemTileType t) { return bound(t); });
  replacer.recursivelyReplaceElementsIn(kernel, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  kernel.walk([&](ParamOp param) {
    OpBuilder b(param);
    int64_t value = variant.getAs<IntegerAttr>(param.getNameAttr()).getInt();
    Value cst = arith::ConstantOp::create(
        b, param.getLoc(), b.getIntegerAttr(param.getType(), value));
    param.replaceAllUsesWith(cst);
    param.erase();
  });
  keepBranchesTaken(kernel);
  bindSizes(kernel, variant);
  return failure(invalid);
}

struct TileSpecializePass
    : public sparse_mla::tile::impl::TileSpecializePassBase<TileSpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (KernelOp kernel : llvm::to_vector(module.getOps<KernelOp>())) {
      ArrayAttr variants = kernel.getVariantsAttr();
      if (!variants)
        continue;
      for (unsigned i = 0; i < variants.size(); ++i) {
        DictionaryAttr variant = kernel.getBinding(i);
        std::string name = variantName(kernel, variant, kernel.getConstantsAttr());
        if (symbols.lookup(name)) {
          kernel.emitOpError("variant #")
              << i << " would be named @" << name << ", which already exists";
          return signalPassFailure();
        }
        auto clone = cast<KernelOp>(kernel->clone());
        clone.setSymName(name);
        clone.removeVariantsAttr();
        clone.removeDeriveAttr();
        clone.removeDeriveNamesAttr();
        clone.removeDeriveSymbolsAttr();
        clone.removeConstantsAttr();
        clone->setAttr(kParamsAttr, variant);
        symbols.insert(clone, Block::iterator(kernel));
        // The sizes that the generic kernel left unchecked are checked now.
        if (failed(bindParameters(clone, variant)) || failed(verify(clone))) {
          kernel.emitOpError("variant #") << i << " " << variant
                                          << " does not give a valid kernel";
          return signalPassFailure();
        }
      }
      symbols.erase(kernel);
    }
  }
};

} // namespace
