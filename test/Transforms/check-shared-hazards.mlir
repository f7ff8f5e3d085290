// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-check-shared-hazards))' -split-input-file -verify-diagnostics | FileCheck %s
// Threads' stores into a shared tile reach wgmma after a barrier: a GEMM
// that reads the tile (or another slice of its allocation) before one is
// refused, with the store it would race with.

// A barrier or a tile.wait in between; a copy (its token waited for); a
// store into another allocation; a store into another CTA (an mbarrier
// publishes it): all accepted, the IR unchanged.
// CHECK-LABEL: tile.kernel @synchronized
// CHECK-COUNT-4: tile.gemm
tile.kernel @synchronized(%kv: memref<?x64xbf16>, %rows: memref<64xi32>, %r: index) warpgroups(1) cluster(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<64x64xbf16>
  %other = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  tile.write %acc, %b : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  tile.barrier
  %g0 = tile.gemm %a, %b, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %idx = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %t = tile.gather_rows %kv[%idx, %c0] into %a : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
  tile.write %acc, %b : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  tile.wait %t
  %g1 = tile.gemm %a, %b, %g0 {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  tile.write %acc, %other : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  %g2 = tile.gemm %a, %b, %g1 {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  tile.write %acc, %b cta %r : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  %g3 = tile.gemm %a, %b, %g2 {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
}

// -----

tile.kernel @store_then_gemm() warpgroups(1) {
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %p = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  // expected-note @+1 {{written here}}
  tile.write %acc, %p : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  // expected-error @+1 {{reads a shared tile that threads wrote with no tile.barrier since}}
  %g = tile.gemm %a, %p, %acc : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
}

// -----

// Another slice of the same allocation counts (slices are not told apart).
tile.kernel @slices_of_one_allocation() warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %p = tile.alloc : !tile.smem<128x64xbf16>
  %top = tile.slice %p[%c0, %c0] : !tile.smem<128x64xbf16> to !tile.smem<64x64xbf16>
  %bottom = tile.slice %p[%c64, %c0] : !tile.smem<128x64xbf16> to !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  // expected-note @+1 {{written here}}
  tile.write %acc, %top : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  // expected-error @+1 {{reads a shared tile that threads wrote}}
  %g = tile.gemm %a, %bottom, %acc : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
}

// -----

// A store in one branch is pending after the scf.if; a barrier inside the
// branch that stores would clear it.
tile.kernel @store_in_a_branch(%c: i1) warpgroups(1) {
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %p = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  scf.if %c {
    // expected-note @+1 {{written here}}
    tile.write %acc, %p : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  }
  // expected-error @+1 {{reads a shared tile that threads wrote}}
  %g = tile.gemm %a, %p, %acc : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
}

// -----

// A store before a region is pending inside it.
tile.kernel @store_before_a_loop(%n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %p = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  // expected-note @+1 {{written here}}
  tile.write %acc, %p : !tile.reg<64x64xf32>, !tile.smem<64x64xbf16>
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{reads a shared tile that threads wrote}}
    %g = tile.gemm %a, %p, %acc : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  }
}
