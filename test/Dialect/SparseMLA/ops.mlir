// RUN: sparse-mla-opt %s | sparse-mla-opt | FileCheck %s
// Every op of the smla dialect prints and parses back.

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%i: index, %n: i32, %keys: !tile.reg<64xi32>, %clock: memref<?x?xi32>,
                   %rows: memref<?x?xi32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // CHECK: smla.token_tile %{{.*}} of row %{{.*}} tokens %{{.*}} per_row %{{.*}}
  %s0, %tn, %t0 = smla.token_tile %i of row %i tokens %i per_row %i
  // CHECK: smla.columns from %{{.*}} tokens %{{.*}} count %{{.*}} heads %{{.*}} count %{{.*}} per_token %{{.*}} row_heads %{{.*}} : !tile.reg<16xi32>
  %r, %t = smla.columns from %i tokens %i count %i heads %i count %i per_token %i row_heads %i
      : !tile.reg<16xi32>
  // CHECK: smla.slot_count %{{.*}}[%{{.*}}, %{{.*}}] width %{{.*}} : memref<?x?xi32>
  %count = smla.slot_count %rows[%i, %i] width %i : memref<?x?xi32>
  // CHECK: smla.key_limit %{{.*}} before %{{.*}} offset %{{.*}} causal %{{.*}}
  %limit = smla.key_limit %i before %i offset %n causal %n
  // CHECK: smla.key_rows %{{.*}} below %{{.*}} first %{{.*}} groups %{{.*}} of %{{.*}} : !tile.reg<64xi32>
  %kr = smla.key_rows %keys below %n first %n groups %n of %n : !tile.reg<64xi32>
  // CHECK: smla.key_clock %{{.*}}, %{{.*}}[%{{.*}}] range %{{.*}} round %{{.*}} window %{{.*}} : memref<?x?xi32>, memref<?x?xi32>
  scf.for %j = %c0 to %i step %c64 {
    smla.key_clock %clock, %rows[%i] range %i round %i window %n : memref<?x?xi32>, memref<?x?xi32>
  }
  return
}
