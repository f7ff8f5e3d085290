//===- Passes.h - Conversions out of the tile dialect -----------*- C++ -*-===//
#ifndef SPARSE_MLA_CONVERSION_PASSES_H
#define SPARSE_MLA_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace sparse_mla {
#define GEN_PASS_DECL
#include "sparse-mla/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sparse-mla/Conversion/Passes.h.inc"
} // namespace sparse_mla

#endif
