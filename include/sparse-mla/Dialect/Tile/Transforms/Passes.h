//===- Passes.h - Passes on the tile dialect --------------------*- C++ -*-===//
#ifndef SPARSE_MLA_DIALECT_TILE_TRANSFORMS_PASSES_H
#define SPARSE_MLA_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Target/Hopper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace sparse_mla::tile {
using hopper::kSharedBytesPerCTA;

#define GEN_PASS_DECL
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sparse-mla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace sparse_mla::tile

#endif
