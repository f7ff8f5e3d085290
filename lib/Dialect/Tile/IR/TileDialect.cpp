//===- TileDialect.cpp - The tile dialect: registration -------------------===//
//
// The attributes, types and ops live in TileAttrs.cpp, TileTypes.cpp and
// TileOps.cpp (one file per .td), the warp-specialized partitions' queries
// in TilePartitions.cpp, the channels between them in TileChannels.cpp.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace sparse_mla::tile;

#include "sparse-mla/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "sparse-mla/Dialect/Tile/IR/TileInterfaces.cpp.inc"

void TileDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "sparse-mla/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}
