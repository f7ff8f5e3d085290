//===- Passes.td - Lowering the sparse-MLA ops -------------*- tablegen -*-===//
#ifndef SPARSE_MLA_SPARSEMLA_PASSES
#define SPARSE_MLA_SPARSEMLA_PASSES

include "mlir/Pass/PassBase.td"

def SparseMLALowerToTilePass : Pass<"smla-lower-to-tile", "::sparse_mla::tile::KernelOp"> {
  let summary = "Writes the token tiles' tokens and columns, slot counts and the keys' kv rows in tile ops";
  let description = [{
    `smla.token_tile` and `smla.key_limit` become index and i32 arithmetic;
    `smla.slot_count` an `scf.if` on whether `counts` has columns (a load,
    clamped, or the width); `smla.columns` a `tile.iota` and two `tile.map`s
    (a column's row, or -1, and its token), in i32; `smla.key_rows` a
    `tile.map` (a key's kv row, or -1). They are written where the ops stand.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::sparse_mla::tile::TileDialect"];
}

def SparseMLAExpandKeyClocksPass : Pass<"smla-expand-key-clocks", "::sparse_mla::tile::KernelOp"> {
  let summary = "Writes out the key ranges' clock of smla.key_clock";
  let description = [{
    Each `smla.key_clock` becomes, where it stands in its block loop, the
    ranges its block passes (`tile.counter_add` on the clock), a bounded
    `tile.counter_wait` for the CTA's round, and the stop of a round's
    clock when that wait runs out; before the loop, a CTA that runs no
    block passes every range. Values are formed in the branches that use
    them, so that the loop keeps no register for the clock.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::math::MathDialect"];
}

#endif
