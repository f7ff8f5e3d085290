//===- Passes.h - Lowering the sparse-MLA ops -------------------*- C++ -*-===//
#ifndef SPARSE_MLA_DIALECT_SPARSEMLA_TRANSFORMS_PASSES_H
#define SPARSE_MLA_DIALECT_SPARSEMLA_TRANSFORMS_PASSES_H

#include "sparse-mla/Dialect/SparseMLA/IR/SparseMLADialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace sparse_mla::smla {
#define GEN_PASS_DECL
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h.inc"
} // namespace sparse_mla::smla

#endif
