// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-assign-layouts))' | FileCheck %s
// GEMM accumulators are #tile.mma and spread through maps (to the load that
// feeds one); reductions give slices; a free load is coalesced.

// CHECK-LABEL: tile.kernel @k
tile.kernel @k(%m: memref<?x64xf32>, %q: memref<?x64xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  // CHECK: tile.alloc : !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  %s = tile.alloc : !tile.smem<64x64xbf16>
  // CHECK: tile.splat {{.*}} : !tile.reg<64x64xf32, #tile.mma>
  %acc = tile.splat %z : !tile.reg<64x64xf32>
  // CHECK: tile.gemm {{.*}} : !tile.smem<64x64xbf16, {{.*}}>, !tile.smem<64x64xbf16, {{.*}}>, !tile.reg<64x64xf32, #tile.mma>
  %r = tile.gemm %s, %s, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  // CHECK: tile.reduce add {{.*}} -> !tile.reg<64xf32, #tile.slice<dim = 1, parent = #tile.mma>>
  %row = tile.reduce add %r along 1 : !tile.reg<64x64xf32> -> !tile.reg<64xf32>
  // CHECK: tile.load {{.*}} -> !tile.reg<64x64xf32, #tile.mma>
  %x = tile.load %m[%c0, %c0] bounds [%n, %n] pad %z : memref<?x64xf32>, f32 -> !tile.reg<64x64xf32>
  // CHECK: tile.load {{.*}} -> !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
  %x2 = tile.load %m[%c0, %c0] bounds [%n, %n] pad %z : memref<?x64xf32>, f32 -> !tile.reg<64x64xf32>
  tile.store %x2, %m[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x64xf32>
  // CHECK: tile.map {{.*}} -> !tile.reg<64x64xf32, #tile.mma>
  %y = tile.map %x, %r : !tile.reg<64x64xf32>, !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
  ^bb0(%a: f32, %b: f32):
    %s2 = arith.addf %a, %b : f32
    tile.yield %s2 : f32
  }
  tile.store %row, %m[%c0, %c0] : !tile.reg<64xf32>, memref<?x64xf32>
  tile.store %y, %m[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x64xf32>
}


// A layout written in the kernel spreads like an anchor's: the rows of a
// scatter take the row slice of its value's layout; the rows of a gather the
// row slice of the 8-lanes-per-line layout of its destination.
// CHECK-LABEL: tile.kernel @written
tile.kernel @written(%ws: memref<?x64xf32>, %kv: memref<?x512xbf16>, %idx: memref<64xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // CHECK: tile.load {{.*}} -> !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.blocked<vector = 8, lanes = 8>>>
  // CHECK: tile.load {{.*}} -> !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>
  %r = tile.load %idx[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %buf = tile.alloc : !tile.smem<64x512xbf16>
  %t = tile.gather_rows %kv[%r, %c0] into %buf : memref<?x512xbf16>, !tile.reg<64xi32>, !tile.smem<64x512xbf16>
  tile.wait %t
  %x = tile.splat %one : !tile.reg<64x8xf32, #tile.mma>
  tile.scatter_add_rows %x, %ws[%r, %c0] : !tile.reg<64x8xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<64xi32>
}

// The results of an scf.if and the values both branches yield share a
// layout: the GEMM's accumulator layout reaches the splat in the else branch.
// CHECK-LABEL: tile.kernel @branches
tile.kernel @branches(%m: memref<?x64xf32>, %c: i1) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %s = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %z : !tile.reg<64x64xf32>
  // CHECK: scf.if {{.*}} -> (!tile.reg<64x64xf32, #tile.mma>)
  %r = scf.if %c -> (!tile.reg<64x64xf32>) {
    %g = tile.gemm %s, %s, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
    scf.yield %g : !tile.reg<64x64xf32>
  } else {
    // CHECK: tile.splat {{.*}} : !tile.reg<64x64xf32, #tile.mma>
    %other = tile.splat %z : !tile.reg<64x64xf32>
    scf.yield %other : !tile.reg<64x64xf32>
  }
  tile.store %r, %m[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x64xf32>
}
