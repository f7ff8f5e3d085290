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

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  SmallVector<OpAsmParser::Argument> args;
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<Type> resultTypes;
  bool isVariadic = false;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(),
                             result.attributes) ||
      function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  int64_t warpgroups = 1;
  if (parser.parseKeyword("warpgroups") || parser.parseLParen() ||
      parser.parseInteger(warpgroups) || parser.parseRParen())
    return failure();
  SmallVector<Type> argTypes;
  for (auto &arg : args)
    argTypes.push_back(arg.type);
  Builder &b = parser.getBuilder();
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(b.getFunctionType(argTypes, resultTypes)));
  result.addAttribute(getWarpgroupsAttrName(result.name),
                      b.getI32IntegerAttr(warpgroups));
  if (succeeded(parser.parseOptionalKeyword("cluster"))) {
    int64_t cluster = 1;
    if (parser.parseLParen() || parser.parseInteger(cluster) || parser.parseRParen())
      return failure();
    result.addAttribute(getClusterAttrName(result.name), b.getI32IntegerAttr(cluster));
  }
  if (succeeded(parser.parseOptionalKeyword("grid"))) {
    AffineMapAttr map;
    SmallVector<Attribute> symbols;
    if (parser.parseLParen() || parser.parseAttribute(map))
      return failure();
    while (succeeded(parser.parseOptionalComma())) {
      SmallVector<NamedAttribute> symbol;
      StringRef param;
      if (succeeded(parser.parseOptionalLBrace())) {
        if (parser.parseKeyword(&param) || parser.parseRBrace())
          return failure();
        symbols.push_back(b.getDictionaryAttr(b.getNamedAttr("param", b.getStringAttr(param))));
        continue;
      }
      OpAsmParser::UnresolvedOperand arg;
      SMLoc loc = parser.getCurrentLocation();
      if (parser.parseOperand(arg))
        return failure();
      if (llvm::none_of(args, [&](auto &a) { return a.ssaName.name == arg.name; }))
        return parser.emitError(loc, "grid symbol ") << arg.name << " is not an argument";
      symbol.push_back(b.getNamedAttr("arg", b.getStringAttr(arg.name.drop_front())));
      if (succeeded(parser.parseOptionalLSquare())) {
        int64_t dim;
        if (parser.parseInteger(dim) || parser.parseRSquare())
          return failure();
        symbol.push_back(b.getNamedAttr("dim", b.getI64IntegerAttr(dim)));
      }
      symbols.push_back(b.getDictionaryAttr(symbol));
    }
    if (parser.parseRParen())
      return failure();
    result.addAttribute(getGridAttrName(result.name), map);
    result.addAttribute(getGridSymbolsAttrName(result.name), b.getArrayAttr(symbols));
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
  if (succeeded(parser.parseOptionalKeyword("variants"))) {
    ArrayAttr variants;
    if (parser.parseLParen() || parser.parseAttribute(variants) ||
        parser.parseRParen())
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
  call_interface_impl::addArgAndResultAttrs(
      b, result, args, resultAttrs, getArgAttrsAttrName(result.name),
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
  function_interface_impl::printFunctionSignature(
      p, *this, getArgumentTypes(), /*isVariadic=*/false, getResultTypes());
  p << " warpgroups(" << getWarpgroups() << ")";
  if (std::optional<uint32_t> cluster = getCluster())
    p << " cluster(" << *cluster << ")";
  if (AffineMapAttr grid = getGridAttr()) {
    p << " grid(" << grid;
    for (Attribute a : getGridSymbolsAttr()) {
      auto symbol = cast<DictionaryAttr>(a);
      if (auto param = symbol.getAs<StringAttr>("param")) {
        p << ", {" << param.getValue() << "}";
        continue;
      }
      p << ", %" << symbol.getAs<StringAttr>("arg").getValue();
      if (auto dim = symbol.getAs<IntegerAttr>("dim"))
        p << "[" << dim.getInt() << "]";
    }
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
  if (ArrayAttr variants = getVariantsAttr())
    p << " variants(" << variants << ")";
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getFunctionTypeAttrName(), getWarpgroupsAttrName(),
       getClusterAttrName(), getVariantsAttrName(), getArgAttrsAttrName(), getResAttrsAttrName(),
       getArgNamesAttrName(), getGridAttrName(), getGridSymbolsAttrName(), getDeriveAttrName(),
       getDeriveNamesAttrName(), getDeriveSymbolsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

void KernelOp::getAsmBlockArgumentNames(Region &, OpAsmSetValueNameFn setNameFn) {
  for (auto [arg, name] : llvm::zip(getBody().getArguments(), getArgNamesAttr()))
    setNameFn(arg, cast<StringAttr>(name).getValue());
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
  if (failed(verifyGrid()))
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
  AffineMapAttr derive = getDeriveAttr();
  if (!derive)
    return variant;
  SmallVector<int64_t> given;
  for (Attribute symbol : getDeriveSymbolsAttr())
    given.push_back(variant.getAs<IntegerAttr>(cast<StringAttr>(symbol)).getInt());
  NamedAttrList binding(variant);
  Builder b(getContext());
  for (auto [name, value] : llvm::zip(getDeriveNamesAttr(), *evaluate(derive.getValue(), given)))
    binding.set(cast<StringAttr>(name), b.getI64IntegerAttr(value));
  return binding.getDictionary(getContext());
}

/// The grid is x, y, z at most, each a function of sizes: integer scalars,
/// dimensions of tensors, or shape parameters.
LogicalResult KernelOp::verifyGrid() {
  AffineMapAttr grid = getGridAttr();
  ArrayAttr symbols = getGridSymbolsAttr();
  if (!grid && !symbols)
    return success();
  if (!grid || !symbols)
    return emitOpError("needs both a grid map and its symbols");
  AffineMap map = grid.getValue();
  if (map.getNumDims() || map.getNumResults() < 1 || map.getNumResults() > 3)
    return emitOpError("grid map has no dimensions and 1 to 3 results (x, y, z), not ") << grid;
  if (map.getNumSymbols() != symbols.size())
    return emitOpError("grid map has ") << map.getNumSymbols() << " symbols but "
                                        << symbols.size() << " are bound";
  ArrayAttr names = getArgNamesAttr();
  for (auto [i, a] : llvm::enumerate(symbols)) {
    auto symbol = cast<DictionaryAttr>(a);
    if (auto param = symbol.getAs<StringAttr>("param")) {
      if (!getVariantsAttr())
        return emitOpError("grid symbol #") << i << " is shape parameter '" << param.getValue()
                                           << "', but the kernel has no variants to bind it";
      continue;
    }
    auto name = symbol.getAs<StringAttr>("arg");
    auto it = name ? llvm::find(names, name) : names.end();
    if (it == names.end())
      return emitOpError("grid symbol #") << i << " is not an argument";
    Type type = getArgumentTypes()[it - names.begin()];
    auto dim = symbol.getAs<IntegerAttr>("dim");
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!dim || dim.getInt() < 0 || dim.getInt() >= memref.getRank())
        return emitOpError("grid symbol %") << name.getValue() << " is a tensor of rank "
                                            << memref.getRank() << ": give a dimension of it";
    } else if (dim || !type.isIntOrIndex()) {
      return emitOpError("grid symbol %") << name.getValue()
                                          << " is a size: an integer scalar or a tensor's dimension";
    }
  }
  return success();
}

llvm::SetVector<StringAttr> KernelOp::getShapeParameters() {
  // Wherever a tile type may sit (results, block arguments, attributes, inside
  // other types): everything that tile-specialize rewrites.
  llvm::SetVector<StringAttr> names;
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
    for (StringAttr name : params)
      if (!variant.contains(name) && !(derived && llvm::is_contained(derived, name)))
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
