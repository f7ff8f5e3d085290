//===- KernelOp.cpp - tile.kernel: syntax, verifier, variants, grid -------===//
//
// A kernel's signature is its launch contract: the arguments by name, the
// warpgroups, the cluster, the grid as a function of the arguments, and the
// variants of its shape parameters that tile-specialize compiles.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace sparse_mla::tile;

//===----------------------------------------------------------------------===//
// Size expressions: the extents of work axes and tensors, as affine
// expressions of the kernel's integer scalars (`%n`), tensor sizes (`%t[0]`)
// and shape parameters (`{hp}`). All of a signature's expressions are the
// results of one map (`sizes`) whose symbols `size_symbols` names.
//===----------------------------------------------------------------------===//

namespace {

/// The sizes a signature states, as the parser collects them.
struct SizeTable {
  Builder &b;
  SmallVector<Attribute> symbols;
  SmallVector<AffineExpr> results;
  /// Argument names that expressions use, checked once all are parsed.
  SmallVector<std::pair<SMLoc, StringRef>> uses;

  AffineExpr symbol(DictionaryAttr key) {
    auto *it = llvm::find(symbols, key);
    if (it == symbols.end()) {
      symbols.push_back(key);
      it = symbols.end() - 1;
    }
    return getAffineSymbolExpr(it - symbols.begin(), b.getContext());
  }
  int64_t add(AffineExpr e) {
    results.push_back(e);
    return results.size() - 1;
  }
};

ParseResult parseSum(OpAsmParser &p, SizeTable &t, AffineExpr &e);

/// An integer, `%arg`, `%tensor[dim]`, `{param}` or a parenthesized sum.
ParseResult parseFactor(OpAsmParser &p, SizeTable &t, AffineExpr &e) {
  Builder &b = t.b;
  int64_t value;
  OptionalParseResult integer = p.parseOptionalInteger(value);
  if (integer.has_value()) {
    if (failed(*integer))
      return failure();
    e = getAffineConstantExpr(value, b.getContext());
    return success();
  }
  if (succeeded(p.parseOptionalLParen()))
    return failure(parseSum(p, t, e) || p.parseRParen());
  if (succeeded(p.parseOptionalLBrace())) {
    StringRef param;
    if (p.parseKeyword(&param) || p.parseRBrace())
      return failure();
    e = t.symbol(b.getDictionaryAttr(b.getNamedAttr("param", b.getStringAttr(param))));
    return success();
  }
  SMLoc loc = p.getCurrentLocation();
  OpAsmParser::UnresolvedOperand arg;
  OptionalParseResult operand = p.parseOptionalOperand(arg);
  if (!operand.has_value())
    return p.emitError(loc, "expected a size: an integer, %scalar, %tensor[dim], "
                            "{parameter} or a parenthesized expression");
  if (failed(*operand))
    return failure();
  if (arg.number != 0)
    return p.emitError(loc, "a size names an argument, not a result #") << arg.number;
  StringRef name = arg.name.drop_front();
  t.uses.push_back({loc, name});
  SmallVector<NamedAttribute> key{b.getNamedAttr("arg", b.getStringAttr(name))};
  if (succeeded(p.parseOptionalLSquare())) {
    int64_t dim;
    if (p.parseInteger(dim) || p.parseRSquare())
      return failure();
    key.push_back(b.getNamedAttr("dim", b.getI64IntegerAttr(dim)));
  }
  e = t.symbol(b.getDictionaryAttr(key));
  return success();
}

/// factor (`*` | `floordiv` | `ceildiv` | `mod` factor)*; a constant
/// divisor must be positive.
ParseResult parseProduct(OpAsmParser &p, SizeTable &t, AffineExpr &e) {
  if (parseFactor(p, t, e))
    return failure();
  while (true) {
    std::optional<AffineExprKind> kind;
    if (succeeded(p.parseOptionalStar()))
      kind = AffineExprKind::Mul;
    else if (succeeded(p.parseOptionalKeyword("floordiv")))
      kind = AffineExprKind::FloorDiv;
    else if (succeeded(p.parseOptionalKeyword("ceildiv")))
      kind = AffineExprKind::CeilDiv;
    else if (succeeded(p.parseOptionalKeyword("mod")))
      kind = AffineExprKind::Mod;
    if (!kind)
      return success();
    SMLoc loc = p.getCurrentLocation();
    AffineExpr rhs;
    if (parseFactor(p, t, rhs))
      return failure();
    auto c = dyn_cast<AffineConstantExpr>(rhs);
    if (*kind != AffineExprKind::Mul && c && c.getValue() < 1)
      return p.emitError(loc, "divides by ") << c.getValue() << ": divisors are positive";
    e = getAffineBinaryOpExpr(*kind, e, rhs);
  }
}

/// product ((`+` | `-`) product)*
ParseResult parseSum(OpAsmParser &p, SizeTable &t, AffineExpr &e) {
  if (parseProduct(p, t, e))
    return failure();
  while (true) {
    bool plus = succeeded(p.parseOptionalPlus());
    if (!plus && failed(p.parseOptionalMinus()))
      return success();
    AffineExpr rhs;
    if (parseProduct(p, t, rhs))
      return failure();
    e = plus ? e + rhs : e - rhs;
  }
}

/// Prints `e` over `symbols`; `context` 0 in a sum, 1 as a product's left
/// operand, 2 as its right operand (where a product needs parentheses).
void printSize(llvm::raw_ostream &os, AffineExpr e, ArrayAttr symbols, int context = 0) {
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    if (c.getValue() < 0 && context)
      os << "(" << c.getValue() << ")";
    else
      os << c.getValue();
    return;
  }
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    auto key = cast<DictionaryAttr>(symbols[s.getPosition()]);
    if (auto param = key.getAs<StringAttr>("param")) {
      os << "{" << param.getValue() << "}";
      return;
    }
    os << "%" << key.getAs<StringAttr>("arg").getValue();
    if (auto dim = key.getAs<IntegerAttr>("dim"))
      os << "[" << dim.getInt() << "]";
    return;
  }
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    os << "d" << d.getPosition();   // only in an unverified op
    return;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  if (e.getKind() == AffineExprKind::Add) {
    if (context)
      os << "(";
    printSize(os, bin.getLHS(), symbols);
    AffineExpr rhs = bin.getRHS();
    auto negated = dyn_cast<AffineBinaryOpExpr>(rhs);
    auto minusOne = negated && rhs.getKind() == AffineExprKind::Mul
                        ? dyn_cast<AffineConstantExpr>(negated.getRHS())
                        : AffineConstantExpr();
    auto c = dyn_cast<AffineConstantExpr>(rhs);
    if (minusOne && minusOne.getValue() == -1) {
      os << " - ";
      printSize(os, negated.getLHS(), symbols, 2);
    } else if (c && c.getValue() < 0) {
      os << " - " << -c.getValue();
    } else {
      os << " + ";
      printSize(os, rhs, symbols);
    }
    if (context)
      os << ")";
    return;
  }
  // Left-associative, but a division on the left is clearer in parentheses.
  bool wrap = context == 2 || (context == 1 && e.getKind() != AffineExprKind::Mul);
  if (wrap)
    os << "(";
  printSize(os, bin.getLHS(), symbols, 1);
  switch (e.getKind()) {
  case AffineExprKind::Mul: os << " * "; break;
  case AffineExprKind::FloorDiv: os << " floordiv "; break;
  case AffineExprKind::CeilDiv: os << " ceildiv "; break;
  default: os << " mod "; break;
  }
  printSize(os, bin.getRHS(), symbols, 2);
  if (wrap)
    os << ")";
}

} // namespace

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  StringAttr name;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(), result.attributes))
    return failure();
  // The arguments: `%name: type`, a tensor's extents `[e, ?, ..]` and
  // `optional`, then attributes.
  SizeTable sizes{b, {}, {}, {}};
  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
        OpAsmParser::Argument &arg = args.emplace_back();
        if (parser.parseArgument(arg, /*allowType=*/true, /*allowAttrs=*/false))
          return failure();
        NamedAttrList attrs;
        if (succeeded(parser.parseOptionalLSquare())) {
          SmallVector<int64_t> extents;
          if (parser.parseCommaSeparatedList([&]() -> ParseResult {
                if (succeeded(parser.parseOptionalQuestion())) {
                  extents.push_back(-1);
                  return success();
                }
                AffineExpr e;
                if (parseSum(parser, sizes, e))
                  return failure();
                extents.push_back(sizes.add(e));
                return success();
              }) ||
              parser.parseRSquare())
            return failure();
          attrs.set(kExtentsAttr, b.getDenseI64ArrayAttr(extents));
        }
        if (succeeded(parser.parseOptionalKeyword("optional")))
          attrs.set(kOptionalAttr, b.getUnitAttr());
        if (parser.parseOptionalAttrDict(attrs))
          return failure();
        arg.attrs = attrs.getDictionary(b.getContext());
        return success();
      }))
    return failure();
  int64_t warpgroups = 1;
  if (parser.parseKeyword("warpgroups") || parser.parseLParen() ||
      parser.parseInteger(warpgroups) || parser.parseRParen())
    return failure();
  SmallVector<Type> argTypes;
  for (auto &arg : args)
    argTypes.push_back(arg.type);
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(b.getFunctionType(argTypes, {})));
  result.addAttribute(getWarpgroupsAttrName(result.name), b.getI32IntegerAttr(warpgroups));
  if (succeeded(parser.parseOptionalKeyword("cluster"))) {
    int64_t cluster = 1;
    if (parser.parseLParen() || parser.parseInteger(cluster) || parser.parseRParen())
      return failure();
    result.addAttribute(getClusterAttrName(result.name), b.getI32IntegerAttr(cluster));
  }
  if (succeeded(parser.parseOptionalKeyword("grid"))) {
    // grid([axis : extent, ..] (window(slot : count from start))?, ..):
    // x, y, z.
    SmallVector<Attribute> dims;
    auto parseDim = [&]() -> ParseResult {
      SmallVector<Attribute> axes;
      SmallVector<int64_t> extents;
      if (parser.parseCommaSeparatedList(
              OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
                StringRef axis;
                AffineExpr e;
                if (parser.parseKeyword(&axis) || parser.parseColon() ||
                    parseSum(parser, sizes, e))
                  return failure();
                axes.push_back(b.getStringAttr(axis));
                extents.push_back(sizes.add(e));
                return success();
              }))
        return failure();
      SmallVector<NamedAttribute> dim{b.getNamedAttr("axes", b.getArrayAttr(axes)),
                                      b.getNamedAttr("extents", b.getDenseI64ArrayAttr(extents))};
      if (succeeded(parser.parseOptionalKeyword("window"))) {
        // window(slot : count from start)
        StringRef slot;
        AffineExpr from, count;
        if (parser.parseLParen() || parser.parseKeyword(&slot) || parser.parseColon() ||
            parseSum(parser, sizes, count) || parser.parseKeyword("from") ||
            parseSum(parser, sizes, from) || parser.parseRParen())
          return failure();
        dim.push_back(b.getNamedAttr("window", b.getStringAttr(slot)));
        dim.push_back(b.getNamedAttr("count", b.getI64IntegerAttr(sizes.add(count))));
        dim.push_back(b.getNamedAttr("from", b.getI64IntegerAttr(sizes.add(from))));
      }
      dims.push_back(b.getDictionaryAttr(dim));
      return success();
    };
    if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, parseDim))
      return failure();
    result.addAttribute(getGridAttrName(result.name), b.getArrayAttr(dims));
  }
  for (auto [loc, used] : sizes.uses)
    if (llvm::none_of(args, [&](auto &a) { return a.ssaName.name.drop_front() == used; }))
      return parser.emitError(loc, "size %") << used << " is not an argument";
  if (!sizes.results.empty()) {
    result.addAttribute(getSizesAttrName(result.name),
                        AffineMapAttr::get(AffineMap::get(0, sizes.symbols.size(), sizes.results,
                                                          b.getContext())));
    result.addAttribute(getSizeSymbolsAttrName(result.name), b.getArrayAttr(sizes.symbols));
  }
  if (succeeded(parser.parseOptionalKeyword("derive"))) {
    // derive([a, b] = affine_map<()[x, y] -> (..)>[x, y])
    SmallVector<Attribute> names, symbols;
    auto parseNames = [&](SmallVectorImpl<Attribute> &into) {
      return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
        StringRef name;
        if (parser.parseKeyword(&name))
          return failure();
        into.push_back(b.getStringAttr(name));
        return success();
      });
    };
    AffineMapAttr map;
    if (parser.parseLParen() || parseNames(names) || parser.parseEqual() ||
        parser.parseAttribute(map) || parseNames(symbols) || parser.parseRParen())
      return failure();
    result.addAttribute(getDeriveAttrName(result.name), map);
    result.addAttribute(getDeriveNamesAttrName(result.name), b.getArrayAttr(names));
    result.addAttribute(getDeriveSymbolsAttrName(result.name), b.getArrayAttr(symbols));
  }
  if (succeeded(parser.parseOptionalKeyword("constants"))) {
    DictionaryAttr constants;
    if (parser.parseLParen() || parser.parseAttribute(constants) || parser.parseRParen())
      return failure();
    result.addAttribute(getConstantsAttrName(result.name), constants);
  }
  if (succeeded(parser.parseOptionalKeyword("variants"))) {
    ArrayAttr variants;
    if (parser.parseLParen() || parser.parseAttribute(variants) || parser.parseRParen())
      return failure();
    result.addAttribute(getVariantsAttrName(result.name), variants);
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  // The names written for the arguments (without the `%`) are the ABI's.
  if (!result.attributes.get(getArgNamesAttrName(result.name))) {
    SmallVector<StringRef> names;
    for (auto &arg : args)
      names.push_back(arg.ssaName.name.drop_front());
    result.addAttribute(getArgNamesAttrName(result.name), b.getStrArrayAttr(names));
  }
  call_interface_impl::addArgAndResultAttrs(b, result, args, {},
                                            getArgAttrsAttrName(result.name),
                                            getResAttrsAttrName(result.name));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  KernelOp::ensureTerminator(*body, b, result.location);
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  ArrayAttr symbols = getSizeSymbolsAttr();
  auto size = [&](int64_t i) { printSize(p.getStream(), getSize(i), symbols); };
  p << "(";
  for (auto [i, arg] : llvm::enumerate(getBody().getArguments())) {
    if (i)
      p << ", ";
    p.printRegionArgument(arg, {}, /*omitType=*/false);
    if (DenseI64ArrayAttr extents = getArgExtents(i)) {
      p << " [";
      llvm::interleaveComma(extents.asArrayRef(), p, [&](int64_t e) {
        if (e < 0)
          p << "?";
        else
          size(e);
      });
      p << "]";
    }
    if (isArgOptional(i))
      p << " optional";
    if (DictionaryAttr attrs = getArgAttrDict(i))
      p.printOptionalAttrDict(attrs.getValue(), {kExtentsAttr, kOptionalAttr});
  }
  p << ") warpgroups(" << getWarpgroups() << ")";
  if (std::optional<uint32_t> cluster = getCluster())
    p << " cluster(" << *cluster << ")";
  if (ArrayAttr grid = getGridAttr()) {
    p << " grid(";
    llvm::interleaveComma(grid, p, [&](Attribute a) {
      auto dim = cast<DictionaryAttr>(a);
      auto extents = dim.getAs<DenseI64ArrayAttr>("extents").asArrayRef();
      p << "[";
      llvm::interleaveComma(llvm::zip(dim.getAs<ArrayAttr>("axes"), extents), p, [&](auto axis) {
        p << cast<StringAttr>(std::get<0>(axis)).getValue() << " : ";
        size(std::get<1>(axis));
      });
      p << "]";
      if (auto slot = dim.getAs<StringAttr>("window")) {
        p << " window(" << slot.getValue() << " : ";
        size(dim.getAs<IntegerAttr>("count").getInt());
        p << " from ";
        size(dim.getAs<IntegerAttr>("from").getInt());
        p << ")";
      }
    });
    p << ")";
  }
  if (AffineMapAttr derive = getDeriveAttr()) {
    auto names = [&](ArrayAttr list) {
      p << "[";
      llvm::interleaveComma(list, p, [&](Attribute a) { p << cast<StringAttr>(a).getValue(); });
      p << "]";
    };
    p << " derive(";
    names(getDeriveNamesAttr());
    p << " = " << derive;
    names(getDeriveSymbolsAttr());
    p << ")";
  }
  if (DictionaryAttr constants = getConstantsAttr())
    p << " constants(" << constants << ")";
  if (ArrayAttr variants = getVariantsAttr())
    p << " variants(" << variants << ")";
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getFunctionTypeAttrName(), getWarpgroupsAttrName(),
       getClusterAttrName(), getVariantsAttrName(), getArgAttrsAttrName(), getResAttrsAttrName(),
       getArgNamesAttrName(), getGridAttrName(), getSizesAttrName(), getSizeSymbolsAttrName(),
       getDeriveAttrName(), getDeriveNamesAttrName(), getDeriveSymbolsAttrName(),
       getConstantsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

void KernelOp::getAsmBlockArgumentNames(Region &, OpAsmSetValueNameFn setNameFn) {
  for (auto [arg, name] : llvm::zip(getBody().getArguments(), getArgNamesAttr()))
    setNameFn(arg, cast<StringAttr>(name).getValue());
}

DenseI64ArrayAttr KernelOp::getArgExtents(unsigned i) {
  DictionaryAttr attrs = getArgAttrDict(i);
  return attrs ? attrs.getAs<DenseI64ArrayAttr>(kExtentsAttr) : DenseI64ArrayAttr();
}

bool KernelOp::isArgOptional(unsigned i) {
  DictionaryAttr attrs = getArgAttrDict(i);
  return attrs && attrs.contains(kOptionalAttr);
}

SmallVector<AffineExpr> KernelOp::getGridCounts() {
  SmallVector<AffineExpr> counts;
  for (Attribute a : getGridAttr()) {
    auto dim = cast<DictionaryAttr>(a);
    if (auto count = dim.getAs<IntegerAttr>("count")) {
      counts.push_back(getSize(count.getInt()));
      continue;
    }
    AffineExpr product = getAffineConstantExpr(1, getContext());
    for (int64_t e : dim.getAs<DenseI64ArrayAttr>("extents").asArrayRef())
      product = product * getSize(e);
    counts.push_back(product);
  }
  return counts;
}

std::optional<std::pair<unsigned, int>> KernelOp::findWorkAxis(StringRef name) {
  ArrayAttr grid = getGridAttr();
  if (!grid)
    return std::nullopt;
  for (auto [d, a] : llvm::enumerate(grid)) {
    auto dim = cast<DictionaryAttr>(a);
    if (auto slot = dim.getAs<StringAttr>("window"); slot && slot.getValue() == name)
      return std::make_pair(unsigned(d), -1);
    for (auto [i, axis] : llvm::enumerate(dim.getAs<ArrayAttr>("axes")))
      if (cast<StringAttr>(axis).getValue() == name)
        return std::make_pair(unsigned(d), int(i));
  }
  return std::nullopt;
}

bool sparse_mla::tile::isGlobalTensor(MemRefType type) {
  if (type.getMemorySpace())
    return false;
  if (type.getLayout().isIdentity())
    return true;
  auto strided = dyn_cast<StridedLayoutAttr>(type.getLayout());
  return strided && type.getRank() == 2 && strided.getOffset() == 0 &&
         strided.getStrides()[1] == 1;
}

LogicalResult KernelOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError("kernels return no values");
  ArrayAttr names = getArgNamesAttr();
  if (names.size() != getArgumentTypes().size())
    return emitOpError("has ") << names.size() << " argument names for "
                               << getArgumentTypes().size() << " arguments";
  llvm::StringSet<> seen;
  for (Attribute name : names)
    if (!seen.insert(cast<StringAttr>(name).getValue()).second)
      return emitOpError("names two arguments '") << cast<StringAttr>(name).getValue()
                                                  << "': the runtime passes them by name";
  for (auto [i, type] : llvm::enumerate(getArgumentTypes())) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!isGlobalTensor(memref))
        return emitOpError("argument #")
               << i << ": tensors are memrefs in the default memory space with the "
                       "identity layout, or rows of contiguous elements apart by any "
                       "stride (strided<[?, 1]>, offset 0)";
      continue;
    }
    if (!type.isIntOrIndexOrFloat())
      return emitOpError("argument #")
             << i << " must be a memref or a scalar, got " << type;
  }
  if (failed(verifySizes()) || failed(verifyGrid()) || failed(verifyExtents()) ||
      failed(verifyConstants()))
    return failure();
  return verifyDerive();
}

/// The results of a map of symbols only at `values`; nullopt where one
/// does not fold to a number (a division by zero).
static std::optional<SmallVector<int64_t>> evaluate(AffineMap map, ArrayRef<int64_t> values) {
  SmallVector<AffineExpr> constants;
  for (int64_t v : values)
    constants.push_back(getAffineConstantExpr(v, map.getContext()));
  AffineMap bound = simplifyAffineMap(map.replaceDimsAndSymbols({}, constants, 0, 0));
  SmallVector<int64_t> results;
  for (AffineExpr e : bound.getResults()) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c)
      return std::nullopt;
    results.push_back(c.getValue());
  }
  return results;
}

/// Derived parameters: a map of the variants' own parameters, whose
/// results bind names that no variant binds, each a value in [0, 2^31).
LogicalResult KernelOp::verifyDerive() {
  AffineMapAttr derive = getDeriveAttr();
  ArrayAttr names = getDeriveNamesAttr(), symbols = getDeriveSymbolsAttr();
  if (!derive && !names && !symbols)
    return success();
  if (!derive || !names || !symbols)
    return emitOpError("needs a derive map, the names it binds and its symbols");
  AffineMap map = derive.getValue();
  if (map.getNumDims() || map.getNumSymbols() != symbols.size() ||
      map.getNumResults() != names.size())
    return emitOpError("derive map has ")
           << map.getNumDims() << " dimensions, " << map.getNumSymbols() << " symbols and "
           << map.getNumResults() << " results, for no dimension, " << symbols.size()
           << " parameters and " << names.size() << " derived ones";
  ArrayAttr variants = getVariantsAttr();
  if (!variants)
    return emitOpError("derives shape parameters but has no variants");
  for (auto [r, name] : llvm::enumerate(names)) {
    if (llvm::is_contained(symbols, name) || llvm::count(names, name) > 1)
      return emitOpError("derives '") << cast<StringAttr>(name).getValue()
                                      << "' twice, or from itself";
  }
  for (auto [i, a] : llvm::enumerate(variants)) {
    auto variant = cast<DictionaryAttr>(a);
    SmallVector<int64_t> given;
    for (Attribute symbol : symbols) {
      auto value = variant.getAs<IntegerAttr>(cast<StringAttr>(symbol));
      if (!value)
        return emitOpError("variant #") << i << " does not bind '"
                                        << cast<StringAttr>(symbol).getValue()
                                        << "', which a derived parameter needs";
      given.push_back(value.getInt());
    }
    std::optional<SmallVector<int64_t>> derived = evaluate(map, given);
    if (!derived)
      return emitOpError("derive map gives variant #") << i << " no number (a division by zero)";
    for (auto [name, value] : llvm::zip(names, *derived)) {
      if (variant.contains(cast<StringAttr>(name)))
        return emitOpError("variant #") << i << " binds '" << cast<StringAttr>(name).getValue()
                                        << "', which the kernel derives";
      if (value < 0 || value >= (int64_t(1) << 31))
        return emitOpError("variant #") << i << " derives '" << cast<StringAttr>(name).getValue()
                                        << "' = " << value << ", not an integer in [0, 2^31)";
    }
  }
  return success();
}

DictionaryAttr KernelOp::getBinding(unsigned i) {
  auto variant = cast<DictionaryAttr>(getVariantsAttr()[i]);
  NamedAttrList binding(variant);
  if (DictionaryAttr constants = getConstantsAttr())
    for (NamedAttribute c : constants)
      binding.set(c.getName(), c.getValue());
  if (AffineMapAttr derive = getDeriveAttr()) {
    SmallVector<int64_t> given;
    for (Attribute symbol : getDeriveSymbolsAttr())
      given.push_back(variant.getAs<IntegerAttr>(cast<StringAttr>(symbol)).getInt());
    Builder b(getContext());
    for (auto [name, value] : llvm::zip(getDeriveNamesAttr(), *evaluate(derive.getValue(), given)))
      binding.set(cast<StringAttr>(name), b.getI64IntegerAttr(value));
  }
  return binding.getDictionary(getContext());
}

/// Constants: integers in [0, 2^31) that no variant binds and no map
/// derives, in a kernel with variants.
LogicalResult KernelOp::verifyConstants() {
  DictionaryAttr constants = getConstantsAttr();
  if (!constants)
    return success();
  ArrayAttr variants = getVariantsAttr();
  if (!variants)
    return emitOpError("has constants but no variants to bind them with");
  ArrayAttr derived = getDeriveNamesAttr();
  for (NamedAttribute c : constants) {
    auto value = dyn_cast<IntegerAttr>(c.getValue());
    if (!value || !value.getType().isSignlessIntOrIndex() ||
        value.getValue().getSignificantBits() > 32 || value.getValue().isNegative())
      return emitOpError("constant '") << c.getName().getValue() << "' is "
                                       << c.getValue() << ", not an integer in [0, 2^31)";
    if ((derived && llvm::is_contained(derived, c.getName())) ||
        llvm::any_of(variants, [&](Attribute v) {
          return cast<DictionaryAttr>(v).contains(c.getName());
        }))
      return emitOpError("binds '") << c.getName().getValue()
                                    << "' both as a constant and in a variant or derive map";
  }
  return success();
}

/// The sizes are a map of symbols only, each an integer scalar argument,
/// a dimension of a tensor argument, or a shape parameter of a kernel with
/// variants.
LogicalResult KernelOp::verifySizes() {
  AffineMapAttr sizes = getSizesAttr();
  ArrayAttr symbols = getSizeSymbolsAttr();
  if (!sizes && !symbols)
    return success();
  if (!sizes || !symbols)
    return emitOpError("needs both a sizes map and its symbols");
  AffineMap map = sizes.getValue();
  if (map.getNumDims() || map.getNumSymbols() != symbols.size())
    return emitOpError("sizes map has ")
           << map.getNumDims() << " dimensions and " << map.getNumSymbols()
           << " symbols, for no dimension and " << symbols.size() << " symbols";
  ArrayAttr names = getArgNamesAttr();
  for (auto [i, a] : llvm::enumerate(symbols)) {
    auto symbol = dyn_cast<DictionaryAttr>(a);
    if (auto param = symbol ? symbol.getAs<StringAttr>("param") : StringAttr()) {
      if (!getVariantsAttr())
        return emitOpError("size {") << param.getValue()
                                     << "} is a shape parameter, but the kernel has no variants "
                                        "to bind it";
      continue;
    }
    auto name = symbol ? symbol.getAs<StringAttr>("arg") : StringAttr();
    auto it = name ? llvm::find(names, name) : names.end();
    if (it == names.end())
      return emitOpError("size symbol #") << i << " is not an argument";
    Type type = getArgumentTypes()[it - names.begin()];
    auto dim = symbol.getAs<IntegerAttr>("dim");
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!dim || dim.getInt() < 0 || dim.getInt() >= memref.getRank())
        return emitOpError("size %") << name.getValue() << " is a tensor of rank "
                                     << memref.getRank() << ": give a dimension of it";
    } else if (dim || !type.isIntOrIndex()) {
      return emitOpError("size %") << name.getValue()
                                   << " is an integer scalar or a tensor's dimension";
    }
  }
  return success();
}

/// x, y and z at most, each a non-empty list of uniquely named axes with
/// their extents, and a named window (count, from) or none.
LogicalResult KernelOp::verifyGrid() {
  ArrayAttr grid = getGridAttr();
  if (!grid)
    return success();
  if (grid.empty() || grid.size() > 3)
    return emitOpError("grid has ") << grid.size() << " dimensions, not 1 to 3 (x, y, z)";
  int64_t numSizes = getSizesAttr() ? getSizes()->getNumResults() : 0;
  auto isSize = [&](Attribute a) {
    auto i = dyn_cast_or_null<IntegerAttr>(a);
    return i && i.getInt() >= 0 && i.getInt() < numSizes;
  };
  llvm::StringSet<> seen;
  for (auto [d, a] : llvm::enumerate(grid)) {
    auto dim = cast<DictionaryAttr>(a);
    auto axes = dim.getAs<ArrayAttr>("axes");
    auto extents = dim.getAs<DenseI64ArrayAttr>("extents");
    if (!axes || axes.empty() || !extents || extents.size() != int64_t(axes.size()) ||
        llvm::any_of(axes, [](Attribute n) { return !isa<StringAttr>(n); }))
      return emitOpError("grid dimension #") << d << " needs named axes, each with an extent";
    for (int64_t e : extents.asArrayRef())
      if (e < 0 || e >= numSizes)
        return emitOpError("grid dimension #") << d << " has an extent that is not a size";
    Attribute slot = dim.get("window"), from = dim.get("from"), count = dim.get("count");
    if ((slot || from || count) && !(isa_and_nonnull<StringAttr>(slot) && isSize(from) && isSize(count)))
      return emitOpError("grid dimension #") << d << " has a window without a name and both sizes";
    SmallVector<Attribute> named(axes.getValue());
    if (slot)
      named.push_back(slot);
    for (Attribute axis : named)
      if (!seen.insert(cast<StringAttr>(axis).getValue()).second)
        return emitOpError("names work axis '") << cast<StringAttr>(axis).getValue()
                                                << "' twice";
  }
  return success();
}

/// Stated extents: on tensors only, one a dimension, each a size or any,
/// none that names the tensor's own size.
LogicalResult KernelOp::verifyExtents() {
  int64_t numSizes = getSizesAttr() ? getSizes()->getNumResults() : 0;
  ArrayAttr names = getArgNamesAttr();
  for (auto [i, type] : llvm::enumerate(getArgumentTypes())) {
    DictionaryAttr attrs = getArgAttrDict(i);
    Attribute extents = attrs ? attrs.get(kExtentsAttr) : Attribute();
    Attribute optional = attrs ? attrs.get(kOptionalAttr) : Attribute();
    auto memref = dyn_cast<MemRefType>(type);
    if ((extents || optional) && !memref)
      return emitOpError("argument %") << cast<StringAttr>(names[i]).getValue()
                                       << " is a scalar: it has no extents and is never optional";
    if (optional && !isa<UnitAttr>(optional))
      return emitOpError("argument %") << cast<StringAttr>(names[i]).getValue()
                                       << ": `optional` is a unit attribute";
    if (!extents)
      continue;
    auto list = dyn_cast<DenseI64ArrayAttr>(extents);
    if (!list || list.size() != memref.getRank())
      return emitOpError("argument %") << cast<StringAttr>(names[i]).getValue() << " has rank "
                                       << memref.getRank() << ": state one extent a dimension";
    for (int64_t e : list.asArrayRef()) {
      if (e < -1 || e >= numSizes)
        return emitOpError("argument %") << cast<StringAttr>(names[i]).getValue()
                                         << " has an extent that is not a size";
      if (e < 0)
        continue;
      bool own = false;
      getSize(e).walk([&](AffineExpr x) {
        auto s = dyn_cast<AffineSymbolExpr>(x);
        if (s && cast<DictionaryAttr>(getSizeSymbolsAttr()[s.getPosition()]).get("arg") ==
                     names[i])
          own = true;
      });
      if (own)
        return emitOpError("an extent of %") << cast<StringAttr>(names[i]).getValue()
                                             << " is stated by its own size";
    }
  }
  return success();
}

llvm::SetVector<StringAttr> KernelOp::getShapeParameters() {
  // Wherever a tile type may sit (results, block arguments, attributes, inside
  // other types): everything that tile-specialize rewrites.
  llvm::SetVector<StringAttr> names;
  if (ArrayAttr symbols = getSizeSymbolsAttr())
    for (Attribute a : symbols)
      if (auto param = dyn_cast<DictionaryAttr>(a) ? cast<DictionaryAttr>(a).getAs<StringAttr>("param")
                                                    : StringAttr())
        names.insert(param);
  AttrTypeWalker walker;
  walker.addWalk([&](RegTileType t) { names.insert_range(t.getSymbols()); });
  walker.addWalk([&](SmemTileType t) { names.insert_range(t.getSymbols()); });
  getBody().walk([&](Operation *op) {
    if (auto param = dyn_cast<ParamOp>(op))
      names.insert(param.getNameAttr());
    walker.walk(op->getAttrDictionary());
    for (Type t : op->getResultTypes())
      walker.walk(t);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (Type t : b.getArgumentTypes())
          walker.walk(t);
  });
  return names;
}

LogicalResult KernelOp::verifyRegions() {
  // memref.dim's own verifier lets a negative constant index through, and
  // the upstream folders then read out of bounds: reject it here.
  WalkResult dims = getBody().walk([&](memref::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    int64_t rank = cast<ShapedType>(dim.getSource().getType()).getRank();
    if (index && (*index < 0 || *index >= rank)) {
      dim.emitOpError("index ") << *index << " is out of range for a memref of rank " << rank;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (dims.wasInterrupted())
    return failure();
  llvm::SetVector<StringAttr> params = getShapeParameters();
  ArrayAttr variants = getVariantsAttr();
  if (!variants) {
    if (!params.empty())
      return emitOpError("has shape parameter '")
             << params.front().getValue()
             << "' but no variants to bind it";
    return success();
  }
  if (variants.empty())
    return emitOpError("lists no variants");
  // Variants may bind names that the body no longer uses (dead code removed).
  for (auto [i, a] : llvm::enumerate(variants)) {
    auto variant = cast<DictionaryAttr>(a);
    for (NamedAttribute binding : variant) {
      auto value = dyn_cast<IntegerAttr>(binding.getValue());
      if (!value || !value.getType().isSignlessIntOrIndex() ||
          value.getValue().getSignificantBits() > 32 || value.getValue().isNegative())
        return emitOpError("variant #")
               << i << " binds '" << binding.getName().getValue() << "' to "
               << binding.getValue() << ", not an integer in [0, 2^31)";
    }
    ArrayAttr derived = getDeriveNamesAttr();
    DictionaryAttr constants = getConstantsAttr();
    for (StringAttr name : params)
      if (!variant.contains(name) && !(derived && llvm::is_contained(derived, name)) &&
          !(constants && constants.contains(name)))
        return emitOpError("variant #")
               << i << " does not bind shape parameter '" << name.getValue()
               << "'";
  }
  // A tile.param of a narrow integer type must hold every variant's value
  // as a non-negative number; an i1 is a flag, 0 or 1.
  WalkResult fits = getBody().walk([&](ParamOp param) {
    unsigned width = param.getType().isIndex() ? 64 : param.getType().getIntOrFloatBitWidth();
    unsigned bits = width == 1 ? 1 : width - 1;
    for (unsigned i = 0; i < variants.size(); ++i) {
      int64_t v = getBinding(i).getAs<IntegerAttr>(param.getNameAttr()).getInt();
      if (width < 64 && v >= (int64_t(1) << bits)) {
        param.emitOpError("cannot hold ")
            << v << ", the value of variant #" << i << ", in " << param.getType();
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(fits.wasInterrupted());
}

LogicalResult WorkIdOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (!kernel)
    return emitOpError("is in no tile.kernel");
  if (!kernel.findWorkAxis(getName()))
    return emitOpError("names '") << getName() << "', which is not a work axis of @"
                                  << kernel.getSymName() << "'s grid";
  return success();
}
