// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-group-gemms))' -split-input-file | FileCheck %s
// GEMMs that follow one another share a wgmma group: each but the group's
// first is marked not first, each but its last not last.

// Three in a row, a slice between two of them: one group.
// CHECK-LABEL: tile.kernel @three
// CHECK: %[[S:.*]] = tile.gemm {{.*}} {tile.wgmma_group_not_last, transpose_b}
// CHECK: tile.slice
// CHECK: tile.gemm {{.*}} {tile.wgmma_group_not_first, tile.wgmma_group_not_last, transpose_b}
// CHECK: tile.gemm {{.*}} {tile.wgmma_group_not_first, transpose_b}
tile.kernel @three(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<32x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x32xf32>
  %s = tile.gemm %a, %b, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  %b2 = tile.slice %b[%c0, %c0] : !tile.smem<32x64xbf16> to !tile.smem<32x64xbf16>
  %t = tile.gemm %a, %b2, %s {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  %u = tile.gemm %a, %b, %t {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  tile.store %u, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
}

// -----

// An op that makes a register tile, or has effects, ends a group.
// CHECK-LABEL: tile.kernel @apart
// CHECK-NOT: tile.wgmma_group
tile.kernel @apart(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<32x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x32xf32>
  %s = tile.gemm %a, %b, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  %fresh = tile.splat %zero : !tile.reg<64x32xf32>
  %t = tile.gemm %a, %b, %fresh {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  tile.store %s, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
  %u = tile.gemm %a, %b, %t {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  tile.store %u, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
}

// -----

// An asynchronous product that the next accumulates into is joined by it:
// the pair is one group. Two independent ones are two.
// CHECK-LABEL: tile.kernel @joined
// CHECK: tile.gemm {{.*}} {async, tile.wgmma_group_not_last}
// CHECK-NEXT: tile.gemm {{.*}} {async, tile.wgmma_group_not_first}
// CHECK-NEXT: tile.gemm {{.*}} {async}
tile.kernel @joined(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x32xbf16>
  %b = tile.alloc : !tile.smem<32x32xbf16>
  %acc = tile.splat %zero : !tile.reg<64x32xf32>
  %s = tile.gemm %a, %b, %acc {async} : !tile.smem<64x32xbf16>, !tile.smem<32x32xbf16>, !tile.reg<64x32xf32>
  %s1 = tile.gemm %a, %b, %s {async} : !tile.smem<64x32xbf16>, !tile.smem<32x32xbf16>, !tile.reg<64x32xf32>
  %t = tile.gemm %a, %b, %acc {async} : !tile.smem<64x32xbf16>, !tile.smem<32x32xbf16>, !tile.reg<64x32xf32>
  %r = tile.gemm_wait %s1 {pending = 1} : !tile.reg<64x32xf32>
  %q = tile.gemm_wait %t {pending = 0} : !tile.reg<64x32xf32>
  tile.store %r, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
  tile.store %q, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
}
