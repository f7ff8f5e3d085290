//===- TileAttrs.cpp - Layouts and enums of the tile dialect ----------------===//
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

#include "sparse-mla/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "sparse-mla/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult
BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          unsigned vector, unsigned lanes) {
  if (!llvm::isPowerOf2_32(vector) || vector > 16)
    return emitError() << "vector must be a power of two up to 16, got "
                       << vector;
  if (!llvm::isPowerOf2_32(lanes) || lanes > hopper::kWarpgroupThreads)
    return emitError() << "lanes must be a power of two up to "
                       << hopper::kWarpgroupThreads << ", got "
                       << lanes;
  return success();
}

LogicalResult
SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned dim, Attribute parent) {
  if (dim > 1)
    return emitError() << "slice dim must be 0 or 1, got " << dim;
  if (!isa<BlockedLayoutAttr, MmaLayoutAttr>(parent))
    return emitError() << "slice parent must be #tile.blocked or #tile.mma";
  return success();
}

LogicalResult
SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         unsigned swizzle, int64_t pitch, int64_t blockStride) {
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "swizzle must be 0, 32, 64 or 128 bytes, got "
                       << swizzle;
  if (swizzle && pitch != swizzle)
    return emitError() << "a swizzled tile has a pitch of one swizzle width ("
                       << swizzle << " bytes), got " << pitch;
  if (pitch <= 0 || pitch % 16 || blockStride <= 0 || blockStride % 16)
    return emitError()
           << "pitch and block_stride must be positive multiples of 16 bytes";
  return success();
}
