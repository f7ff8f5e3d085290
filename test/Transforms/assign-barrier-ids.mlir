// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-assign-barrier-ids))' | FileCheck %s
// Each barrier of some warpgroups, and each vote inside a partition, gets a
// hardware barrier id and its thread count: the CTA 0, warpgroup w alone
// 1 + w, other sets the next free id (after 1 + warpgroups) in order of
// first appearance, the same set the same id. CTA barriers keep none.

// CHECK-LABEL: tile.kernel @ids
// CHECK:      tile.barrier warpgroups([0, 1, 2]) {tile.barrier_id = 0 : i64, tile.barrier_threads = 384 : i64}
// CHECK-NEXT: tile.barrier warpgroups([2]) {tile.barrier_id = 3 : i64, tile.barrier_threads = 128 : i64}
// CHECK-NEXT: tile.barrier warpgroups([0, 2]) {tile.barrier_id = 4 : i64, tile.barrier_threads = 256 : i64}
// CHECK-NEXT: tile.barrier warpgroups([1, 2]) {tile.barrier_id = 5 : i64, tile.barrier_threads = 256 : i64}
// CHECK-NEXT: tile.barrier warpgroups([0, 2]) {tile.barrier_id = 4 : i64, tile.barrier_threads = 256 : i64}
// CHECK-NEXT: tile.barrier{{$}}
// The vote of the partition of warpgroups 1 and 2 uses their pair's id.
// CHECK:      tile.any {{.*}} {tile.barrier_id = 5 : i64, tile.barrier_threads = 256 : i64}
tile.kernel @ids(%idx: memref<?xi32>) warpgroups(3) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i32
  tile.barrier warpgroups([0, 1, 2])
  tile.barrier warpgroups([2])
  tile.barrier warpgroups([0, 2])
  tile.barrier warpgroups([1, 2])
  tile.barrier warpgroups([0, 2])
  tile.barrier
  tile.warp_specialize warpgroups([1, 2]) registers([40, 232]) {
  }, {
    %rows = tile.load %idx[%c0] : memref<?xi32> -> !tile.reg<64xi32>
    %ok = tile.map %rows : !tile.reg<64xi32> -> !tile.reg<64xi1> {
    ^bb0(%r: i32):
      %v = arith.cmpi sge, %r, %z : i32
      tile.yield %v : i1
    }
    %live = tile.any %ok : !tile.reg<64xi1>
  }
}
