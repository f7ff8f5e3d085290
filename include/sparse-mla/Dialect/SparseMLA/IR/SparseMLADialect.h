//===- SparseMLADialect.h - The sparse-MLA kernels' ops ---------*- C++ -*-===//
#ifndef SPARSE_MLA_DIALECT_SPARSEMLA_IR_SPARSEMLADIALECT_H
#define SPARSE_MLA_DIALECT_SPARSEMLA_IR_SPARSEMLADIALECT_H

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sparse_mla::smla {
/// A 1-D register tile of i32 (a layout or none).
bool isI32Vector(mlir::Type type);
} // namespace sparse_mla::smla

#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLADialect.h.inc"

#define GET_OP_CLASSES
#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLAOps.h.inc"

#endif
