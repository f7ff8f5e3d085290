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

// smla.slot_count: with columns in `counts`, the count at (row, min(group,
// last column)), clamped to [0, width] in i32; without, the width.
// CHECK-LABEL: tile.kernel @slot_count
// CHECK: %[[COLUMNS:.*]] = memref.dim %counts, %c1
// CHECK: %[[COUNTED:.*]] = arith.cmpi ugt, %[[COLUMNS]], %c0
// CHECK: %[[WIDTH:.*]] = arith.index_cast %w : index to i32
// CHECK: %[[N:.*]] = scf.if %[[COUNTED]] -> (i32) {
// CHECK:   %[[LAST:.*]] = arith.subi %[[COLUMNS]], %c1
// CHECK:   %[[COLUMN:.*]] = arith.minui %g, %[[LAST]]
// CHECK:   %[[COUNT:.*]] = memref.load %counts[%row, %[[COLUMN]]]
// CHECK:   %[[POSITIVE:.*]] = arith.maxsi %[[COUNT]], %c0_i32
// CHECK:   %[[CLAMPED:.*]] = arith.minui %[[POSITIVE]], %[[WIDTH]]
// CHECK:   scf.yield %[[CLAMPED]]
// CHECK: } else {
// CHECK:   scf.yield %[[WIDTH]]
// CHECK: arith.index_castui %[[N]] : i32 to index
tile.kernel @slot_count(%counts: memref<?x?xi32>, %out: memref<?xindex>, %row: index, %g: index,
                        %w: index) warpgroups(1) {
  %n = smla.slot_count %counts[%row, %g] width %w : memref<?x?xi32>
  memref.store %n, %out[%n] : memref<?xindex>
}

// smla.key_limit: min(q_offset + the end of the tokens, Skv) where causal,
// else Skv, in i32.
// CHECK-LABEL: tile.kernel @key_limit
// CHECK: %[[KEYS:.*]] = arith.index_cast %kv : index to i32
// CHECK: %[[END:.*]] = arith.index_cast %end : index to i32
// CHECK: %[[POSITION:.*]] = arith.addi %[[END]], %offset : i32
// CHECK: %[[SEEN:.*]] = arith.minsi %[[POSITION]], %[[KEYS]] : i32
// CHECK: %[[CAUSAL:.*]] = arith.cmpi ne, %causal, %c0_i32 : i32
// CHECK: arith.select %[[CAUSAL]], %[[SEEN]], %[[KEYS]] : i32
tile.kernel @key_limit(%out: memref<?xi32>, %kv: index, %end: index, %offset: i32, %causal: i32)
    warpgroups(1) {
  %limit = smla.key_limit %kv before %end offset %offset causal %causal
  memref.store %limit, %out[%end] : memref<?xi32>
}
