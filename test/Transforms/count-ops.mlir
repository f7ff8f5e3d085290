// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-count-ops{op=tile.gemm}))' | FileCheck %s
// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-count-ops))' | FileCheck %s --check-prefix=NONE
// The kernel gains an optional [CTAs, 1] argument op_counts (its rows: the
// grid's CTAs), and after the first tile.gemm (not the second) one thread
// of each warpgroup that runs it adds 1 to the CTA's row, in launch order
// (x fastest), where the argument is given. A kernel without that op, or
// the pass without `op`, is left alone.
// CHECK-LABEL: tile.kernel @two_gemms
// CHECK-SAME: %op_counts: memref<?x?xi32> [(%n ceildiv 64) * 3, 1] optional
// CHECK: %[[FIRST:.*]] = tile.gemm
// CHECK: %[[ROWS:.*]] = memref.dim %op_counts, %c0
// CHECK: %[[GIVEN:.*]] = arith.cmpi ugt, %[[ROWS]], %c0
// CHECK: scf.if %[[GIVEN]] {
// CHECK:   tile.block_id  z
// CHECK:   tile.block_id  y
// CHECK:   tile.grid_dim  y
// CHECK:   tile.block_id  x
// CHECK:   tile.grid_dim  x
// CHECK:   tile.counter_add %op_counts[%{{.*}}, %{{.*}}], %c1_i32
// CHECK: }
// CHECK: tile.gemm
// CHECK-NOT: tile.counter_add
// CHECK-LABEL: tile.kernel @no_gemm
// CHECK-NOT: op_counts
// NONE-NOT: op_counts
!s = !tile.smem<64x64xbf16>
!acc = !tile.reg<64x64xf32, #tile.mma>
tile.kernel @two_gemms(%n: index) warpgroups(1) grid([block : %n ceildiv 64], [h : 3]) {
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !s
  %z = tile.splat %zero : !acc
  %x = tile.gemm %a, %a, %z : !s, !s, !acc
  %y = tile.gemm %a, %a, %x : !s, !s, !acc
}
tile.kernel @no_gemm() warpgroups(1) {
}
