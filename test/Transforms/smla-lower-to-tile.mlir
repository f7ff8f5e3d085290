// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(smla-lower-to-tile))' | FileCheck %s

// smla.token_tile: the first token tile * T, min(T, S - first) tokens, row
// b * S + first.
// CHECK-LABEL: tile.kernel @token_tile
// CHECK: %[[FIRST:.*]] = arith.muli %tile, %t : index
// CHECK: %[[LEFT:.*]] = arith.subi %s, %[[FIRST]] : index
// CHECK: %[[COUNT:.*]] = arith.minui %t, %[[LEFT]] : index
// CHECK: %[[START:.*]] = arith.muli %b, %s : index
// CHECK: %[[ROW:.*]] = arith.addi %[[START]], %[[FIRST]] : index
// CHECK: memref.store %[[FIRST]], %out[%[[COUNT]]]
// CHECK: memref.store %[[ROW]], %out[%[[COUNT]]]
tile.kernel @token_tile(%out: memref<?xindex>, %tile: index, %b: index, %t: index, %s: index)
    warpgroups(1) {
  %first, %count, %row = smla.token_tile %tile of row %b tokens %t per_row %s
  memref.store %first, %out[%count] : memref<?xindex>
  memref.store %row, %out[%count] : memref<?xindex>
}

// smla.columns: the columns' iota, then a column's row ((first token + t)
// * heads + first head + h, or -1 past the tokens or the heads left) and
// its token t, for column first + c = t * per_token + h, in i32.
// CHECK-LABEL: tile.kernel @columns
// CHECK-DAG: %[[FIRST:.*]] = arith.index_cast %first : index to i32
// CHECK-DAG: %[[PER:.*]] = arith.index_cast %per : index to i32
// CHECK: %[[COLS:.*]] = tile.iota along 0 : !tile.reg<16xi32>
// CHECK: tile.map %[[COLS]]
// CHECK:   %[[C:.*]] = arith.addi %{{.*}}, %[[FIRST]] : i32
// CHECK:   %[[T:.*]] = arith.divui %[[C]], %[[PER]] : i32
// CHECK:   %[[H:.*]] = arith.remui %[[C]], %[[PER]] : i32
// CHECK:   arith.cmpi ult, %[[T]]
// CHECK:   arith.cmpi ult, %[[H]]
// CHECK:   arith.select %{{.*}}, %{{.*}}, %c-1_i32 : i32
// CHECK: tile.map %[[COLS]]
// CHECK:   arith.divui
// CHECK-NOT: smla.columns
tile.kernel @columns(%out: memref<?xi32>, %first: index, %t0: index, %tn: index, %h0: index,
                     %left: index, %per: index, %heads: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %rows, %tokens = smla.columns from %first tokens %t0 count %tn heads %h0 count %left
      per_token %per row_heads %heads : !tile.reg<16xi32>
  tile.store %rows, %out[%c0] : !tile.reg<16xi32>, memref<?xi32>
  tile.store %tokens, %out[%c0] : !tile.reg<16xi32>, memref<?xi32>
}

// smla.key_rows: (first + k) * groups + group where 0 <= k < limit, else -1.
// CHECK-LABEL: tile.kernel @key_rows
// CHECK: tile.map %{{.*}} : !tile.reg<64xi32> -> !tile.reg<64xi32>
// CHECK: ^bb0(%[[K:.*]]: i32):
// CHECK:   %[[LO:.*]] = arith.cmpi sge, %[[K]], %c0_i32
// CHECK:   %[[HI:.*]] = arith.cmpi slt, %[[K]], %limit
// CHECK:   %[[OK:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK:   %[[POS:.*]] = arith.addi %first, %[[K]]
// CHECK:   %[[SCALED:.*]] = arith.muli %[[POS]], %groups
// CHECK:   %[[ROW:.*]] = arith.addi %[[SCALED]], %g
// CHECK:   arith.select %[[OK]], %[[ROW]], %c-1_i32
// CHECK-NOT: smla.key_rows
tile.kernel @key_rows(%keys: memref<?xi32>, %out: memref<?xi32>, %limit: i32, %first: i32,
                      %g: i32, %groups: i32) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %k = tile.load %keys[%c0] : memref<?xi32> -> !tile.reg<64xi32>
  %rows = smla.key_rows %k below %limit first %first groups %g of %groups : !tile.reg<64xi32>
  tile.store %rows, %out[%c0] : !tile.reg<64xi32>, memref<?xi32>
}
