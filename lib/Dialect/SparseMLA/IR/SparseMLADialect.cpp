//===- SparseMLADialect.cpp - The sparse-MLA kernels' ops -----------------===//
#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLADialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace sparse_mla;
using namespace sparse_mla::smla;

#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLADialect.cpp.inc"

void SparseMLADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLAOps.cpp.inc"
      >();
}

bool sparse_mla::smla::isI32Vector(Type type) {
  auto tile = dyn_cast<tile::RegTileType>(type);
  return tile && tile.getRank() == 1 && tile.getElementType().isInteger(32);
}

#define GET_OP_CLASSES
#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLAOps.cpp.inc"

LogicalResult KeyClockOp::verify() {
  if (failed(tile::verifyCounter(*this, cast<MemRefType>(getClock().getType()))))
    return failure();
  auto keys = cast<MemRefType>(getKeys().getType());
  if (keys.getRank() != 2 || !keys.getElementType().isInteger(32))
    return emitOpError("reads its keys from a 2-D memref of i32, got ") << keys;
  auto loop = dyn_cast<scf::ForOp>((*this)->getParentOp());
  if (!loop || !matchPattern(loop.getLowerBound(), m_Zero()))
    return emitOpError("must be in the body of an scf.for from 0 over the blocks of keys");
  return success();
}
