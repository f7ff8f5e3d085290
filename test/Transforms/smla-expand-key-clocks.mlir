// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(smla-expand-key-clocks))' | FileCheck %s
// smla.key_clock written out where it stands in its block loop: before the
// loop, a CTA without blocks passes every range; in the loop, under "the
// clock has ranges", the block's range and the one before it are read back
// from the keys, the ranges in between (all of the rest for the last block)
// are passed on the clock row of the CTA's round, and a bounded wait for
// range r - window - 1; a wait that runs out stops the round's clock. A
// range of 2^k keys is a shift by k; a round has at least one CTA.

// CHECK-LABEL: tile.kernel @clocked
// CHECK: %[[RANGES:.*]] = memref.dim %clock, %c1
// CHECK: %[[CLOCKED:.*]] = arith.cmpi ugt, %[[RANGES]], %c0
// CHECK: %[[NONE:.*]] = arith.cmpi eq, %n, %c0
// CHECK: %[[ALL:.*]] = arith.andi %[[CLOCKED]], %[[NONE]]
// CHECK: scf.if %[[ALL]] {
// CHECK:   tile.grid_dim  x
// CHECK:   %[[PER:.*]] = arith.maxui %ctas, %c1
// CHECK:   arith.divui %{{.*}}, %[[PER]]
// CHECK:   scf.for %{{.*}} = %c0{{.*}} to %[[RANGES]]
// CHECK:     tile.counter_add %clock[
// CHECK: scf.for %[[J:.*]] = %c0 to %n step %c64 {
// CHECK:   scf.if %[[CLOCKED]] {
// CHECK:     %[[KEY:.*]] = memref.load %keys[%row, %[[J]]]
// CHECK:     arith.maxui %[[J]], %c64
// CHECK:     memref.load %keys[%row,
// CHECK:     %[[RANGE:.*]] = arith.index_cast %range : index to i32
// CHECK:     %[[SHIFT:.*]] = math.cttz %[[RANGE]]
// CHECK:     arith.shrui %{{.*}}, %[[SHIFT]]
// CHECK:     %[[NEXT:.*]] = arith.addi %[[J]], %c64
// CHECK:     %[[LAST:.*]] = arith.cmpi uge, %[[NEXT]], %n
// CHECK:     %[[UPTO:.*]] = arith.select %[[LAST]], %[[RANGES]]
// CHECK:     %[[MOVED:.*]] = arith.cmpi ugt, %[[UPTO]]
// CHECK:     scf.if %[[MOVED]] {
// CHECK:       tile.grid_dim  y
// CHECK:       arith.minui
// CHECK:       scf.for
// CHECK:         tile.counter_add %clock[{{.*}}], %c1_i32
// CHECK:       scf.if
// CHECK:         %[[REACHED:.*]] = tile.counter_wait %clock[{{.*}}], %{{.*}}, %c256_i32
// CHECK:         %[[LATE:.*]] = arith.xori %[[REACHED]], %true
// CHECK:         scf.if %[[LATE]] {
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[RANGES]]
// CHECK:             tile.counter_add
// CHECK:   tile.store
// CHECK-NOT: smla.key_clock
tile.kernel @clocked(%clock: memref<?x?xi32>, %keys: memref<?x?xi32>, %row: index, %n: index,
                     %range: index, %ctas: index, %w: i32, %out: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  scf.for %j = %c0 to %n step %c64 {
    smla.key_clock %clock, %keys[%row] range %range round %ctas window %w
        : memref<?x?xi32>, memref<?x?xi32>
    %k = tile.load %keys[%row, %j] : memref<?x?xi32> -> !tile.reg<64xi32>
    tile.store %k, %out[%j] : !tile.reg<64xi32>, memref<?xi32>
  }
}
