// RUN: sparse-mla-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile.kernel(tile-decode-work))' | FileCheck %s
// Each tile.work_id becomes the decode of the grid the kernel declares, in
// 32 bits: its dimension's block id, plus the window's start, divided by
// the extents of the axes inside it and taken modulo its own (the outermost
// axis without a modulo); the window's slot is the block id itself.

// CHECK-LABEL: tile.kernel @tiles
// b: (x + first) / (seq ceildiv t), no modulo.
// CHECK: %[[X:.*]] = tile.block_id  x
// CHECK: %[[X32:.*]] = arith.index_castui %[[X]] : index to i32
// CHECK: %[[FIRST:.*]] = arith.index_castui %first : index to i32
// CHECK: %[[LINEAR:.*]] = arith.addi %[[X32]], %[[FIRST]] : i32
// CHECK: %[[SEQ:.*]] = arith.index_castui %seq : index to i32
// CHECK: %[[T:.*]] = arith.index_castui %t : index to i32
// CHECK: %[[PER_ROW:.*]] = arith.ceildivui %[[SEQ]], %[[T]] : i32
// CHECK: %[[B32:.*]] = arith.divui %[[LINEAR]], %[[PER_ROW]] : i32
// CHECK-NOT: arith.remui
// CHECK: %[[B:.*]] = arith.index_castui %[[B32]] : i32 to index
// tile: (x + first) mod (seq ceildiv t), nothing inside it to divide by.
// CHECK: tile.block_id  x
// CHECK-NOT: arith.divui
// CHECK: %[[TILE32:.*]] = arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: %[[TILE:.*]] = arith.index_castui %[[TILE32]] : i32 to index
// slot: the block id.
// CHECK: %[[SLOT:.*]] = tile.block_id  x
// g: y / (h ceildiv 64) (hb's extent, inside it; h an i64, truncated);
// hb: y mod it.
// CHECK: %[[Y:.*]] = tile.block_id  y
// CHECK: %[[H:.*]] = arith.trunci %h : i64 to i32
// CHECK: %[[HB:.*]] = arith.ceildivui %[[H]], %c64_i32 : i32
// CHECK: arith.divui %{{.*}}, %[[HB]] : i32
// CHECK: tile.block_id  y
// CHECK: arith.trunci %h
// CHECK: arith.remui
// CHECK: memref.store %[[B]], %out[%[[TILE]]]
// CHECK: memref.store %[[SLOT]], %out
// CHECK-NOT: tile.work_id
tile.kernel @tiles(%keys: memref<?x?xi32>, %out: memref<?xindex>, %batch: index, %seq: index,
                   %t: index, %first: index, %n: index, %h: i64) warpgroups(1)
    grid([b : %batch, tile : %seq ceildiv %t] window(slot : %n from %first),
         [g : %keys[0], hb : %h ceildiv 64]) {
  %b = tile.work_id "b"
  %tile = tile.work_id "tile"
  %slot = tile.work_id "slot"
  %g = tile.work_id "g"
  %hb = tile.work_id "hb"
  memref.store %b, %out[%tile] : memref<?xindex>
  memref.store %slot, %out[%g] : memref<?xindex>
  memref.store %hb, %out[%hb] : memref<?xindex>
}

// -----

// An extent that names a shape parameter has its value only per variant.
// expected-error @+1 {{has shape parameters; run tile-specialize first}}
tile.kernel @generic(%out: memref<?xindex>, %h: index) warpgroups(1)
    grid([hb : %h ceildiv {hp}]) variants([{hp = 32}]) {
  %hb = tile.work_id "hb"
  memref.store %hb, %out[%hb] : memref<?xindex>
}
