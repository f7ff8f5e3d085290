//===- TileTypes.cpp - Register and shared tiles ----------------------------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sparse_mla::tile;

#define GET_TYPEDEF_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileTypes.cpp.inc"

void TileDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "sparse-mla/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

TileDim sparse_mla::tile::getTileDim(Type tile, unsigned i) {
  auto shaped = cast<ShapedType>(tile);
  int64_t size = shaped.getDimSize(i);
  if (!ShapedType::isDynamic(size))
    return {size, {}};
  ArrayRef<StringAttr> symbols = isa<RegTileType>(tile)
                                     ? cast<RegTileType>(tile).getSymbols()
                                     : cast<SmemTileType>(tile).getSymbols();
  return {size, symbols[llvm::count(shaped.getShape().take_front(i),
                                    ShapedType::kDynamic)]};
}

bool sparse_mla::tile::sameShape(Type a, Type b) {
  auto sa = cast<ShapedType>(a), sb = cast<ShapedType>(b);
  if (sa.getRank() != sb.getRank())
    return false;
  for (int64_t i = 0; i < sa.getRank(); ++i)
    if (getTileDim(a, i) != getTileDim(b, i))
      return false;
  return true;
}

LogicalResult sparse_mla::tile::requireSpecialized(KernelOp kernel) {
  if (!kernel.getVariantsAttr())
    return success();
  return kernel.emitOpError("has shape parameters; run tile-specialize first");
}

std::string TileDim::str() const {
  return symbol ? ("{" + symbol.getValue() + "}").str() : std::to_string(size);
}

/// `64x{dqk}xbf16`: sizes and `{name}` shape parameters, then the element type.
template <typename T>
static Type parseTileType(AsmParser &parser) {
  SmallVector<int64_t> shape;
  SmallVector<StringAttr> symbols;
  Type elementType;
  Attribute layout;
  if (parser.parseLess())
    return {};
  while (true) {
    // `?` parses, for the verifier to say that it needs a name.
    if (parser.parseDimensionList(shape, /*allowDynamic=*/true))
      return {};
    StringRef name;
    if (failed(parser.parseOptionalLBrace()))
      break;
    if (parser.parseKeyword(&name) || parser.parseRBrace() ||
        parser.parseXInDimensionList())
      return {};
    shape.push_back(ShapedType::kDynamic);
    symbols.push_back(parser.getBuilder().getStringAttr(name));
  }
  if (parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(layout))
    return {};
  if (parser.parseGreater())
    return {};
  return T::getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                       parser.getContext(), shape, elementType, layout, symbols);
}

template <typename T>
static void printTileType(AsmPrinter &printer, T type) {
  printer << "<";
  for (int64_t i = 0; i < type.getRank(); ++i)
    printer << getTileDim(type, i).str() << "x";
  printer << type.getElementType();
  if (type.getLayout())
    printer << ", " << type.getLayout();
  printer << ">";
}

Type RegTileType::parse(AsmParser &parser) {
  return parseTileType<RegTileType>(parser);
}
void RegTileType::print(AsmPrinter &printer) const {
  printTileType(printer, *this);
}
Type SmemTileType::parse(AsmParser &parser) {
  return parseTileType<SmemTileType>(parser);
}
void SmemTileType::print(AsmPrinter &printer) const {
  printTileType(printer, *this);
}

/// Sizes are positive and the tile holds at most `maxElements` (the passes
/// enumerate elements); each dynamic size is a named shape parameter, and a
/// tile with parameters has no layout (layouts need the sizes).
static LogicalResult verifyDims(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<int64_t> shape, Attribute layout,
                                ArrayRef<StringAttr> symbols, int64_t maxElements) {
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0 && !ShapedType::isDynamic(d); }))
    return emitError() << "tile dimensions must be positive";
  int64_t elements = 1;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) && (elements *= std::min(d, maxElements + 1)) > maxElements)
      return emitError() << "tile of more than " << maxElements << " elements";
  if (static_cast<size_t>(llvm::count(shape, ShapedType::kDynamic)) != symbols.size())
    return emitError() << "every dynamic dimension must be a named shape parameter";
  if (llvm::any_of(symbols, [](StringAttr s) { return !s || s.empty(); }))
    return emitError() << "shape parameters need a name";
  if (!symbols.empty() && layout)
    return emitError() << "a tile with shape parameters has no layout until "
                          "tile-specialize binds them";
  return success();
}

static bool isTileElementType(Type t) {
  return t.isIntOrFloat() && t.getIntOrFloatBitWidth() >= 1 &&
         t.getIntOrFloatBitWidth() <= 64;
}

LogicalResult RegTileType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> shape, Type elementType,
                                  Attribute layout, ArrayRef<StringAttr> symbols) {
  if (shape.empty() || shape.size() > 2)
    return emitError() << "register tiles are 1-D or 2-D";
  if (failed(verifyDims(emitError, shape, layout, symbols, kMaxRegTileElements)))
    return failure();
  if (!isTileElementType(elementType))
    return emitError() << "register tile elements must be integers or floats";
  if (!layout)
    return success();
  if (!isa<BlockedLayoutAttr, MmaLayoutAttr, SliceLayoutAttr>(layout))
    return emitError() << "register tile layout must be #tile.blocked, "
                          "#tile.mma or #tile.slice";
  std::string why;
  if (failed(getThreadElements(layout, shape, &why)))
    return emitError() << why;
  return success();
}

LogicalResult SmemTileType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<int64_t> shape, Type elementType,
                                   Attribute layout, ArrayRef<StringAttr> symbols) {
  if (shape.size() < 2 || shape.size() > 3)
    return emitError() << "shared tiles are 2-D, or 3-D rings of stages";
  if (failed(verifyDims(emitError, shape, layout, symbols, kMaxSmemTileElements)))
    return failure();
  if (!isTileElementType(elementType) || elementType.getIntOrFloatBitWidth() < 8)
    return emitError() << "shared tile elements must be integers or floats of "
                          "at least 8 bits";
  if (layout && !isa<SharedLayoutAttr>(layout))
    return emitError() << "shared tile layout must be #tile.shared";
  if (auto shared = dyn_cast_if_present<SharedLayoutAttr>(layout)) {
    int64_t rowBytes = shape.back() * getElementBytes(elementType);
    if (shared.getSwizzle() && rowBytes % shared.getSwizzle())
      return emitError() << "rows of " << rowBytes
                         << " bytes are not whole blocks of the "
                         << shared.getSwizzle() << "-byte swizzle";
  }
  return success();
}
