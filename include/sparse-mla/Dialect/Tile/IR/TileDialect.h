//===- TileDialect.h - The tile dialect -------------------------*- C++ -*-===//
#ifndef SPARSE_MLA_DIALECT_TILE_IR_TILEDIALECT_H
#define SPARSE_MLA_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h.inc"
#include "sparse-mla/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileOps.h.inc"

#endif
