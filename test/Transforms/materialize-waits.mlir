// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-materialize-waits))' -split-input-file | FileCheck %s
// A tile.wait becomes the counted wait that leaves in flight the copy groups
// started after its latest-started token, then a CTA barrier.

// CHECK-LABEL: tile.kernel @count
// CHECK:      %[[A:.*]] = tile.async_copy
// CHECK-NEXT: %[[B:.*]] = tile.async_copy
// CHECK-NEXT: %[[C:.*]] = tile.async_copy
// CHECK-NEXT: tile.async_wait 2
// CHECK-NEXT: tile.barrier
// CHECK-NOT:  tile.wait
// CHECK:      tile.async_wait 0
// CHECK-NEXT: tile.barrier
tile.kernel @count(%kv: memref<?x64xbf16>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<64x64xbf16>
  %c = tile.alloc : !tile.smem<64x64xbf16>
  %ta = tile.async_copy %kv[%c0, %c0] into %a : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  %tb = tile.async_copy %kv[%c0, %c0] into %b : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  %tc = tile.async_copy %kv[%c0, %c0] into %c : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  // Only %a's group must have landed: the two after it may stay in flight.
  tile.wait %ta
  // All of them (the latest-started token is the last copy).
  tile.wait %tc, %tb
}

// -----

// Copies in a nested region are not counted: the wait waits for all.
// CHECK-LABEL: tile.kernel @nested
// CHECK: scf.if
// CHECK: tile.async_wait 0
// CHECK-NEXT: tile.barrier
tile.kernel @nested(%kv: memref<?x64xbf16>, %p: i1) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<64x64xbf16>
  %ta = tile.async_copy %kv[%c0, %c0] into %a : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  scf.if %p {
    %tb = tile.async_copy %kv[%c0, %c0] into %b : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  }
  tile.wait %ta
}

// -----

// A wait without tokens waits for every copy.
// CHECK-LABEL: tile.kernel @all
// CHECK: tile.async_wait 0
// CHECK-NEXT: tile.barrier
tile.kernel @all(%kv: memref<?x64xbf16>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %ta = tile.async_copy %kv[%c0, %c0] into %a : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  tile.wait
}
