// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-assign-layouts,tile-allocate-shared),convert-tile-to-nvgpu)' | FileCheck %s

// Two warpgroups split a gather: each issues every other 16-byte chunk.
// CHECK-LABEL: gpu.func @split_gather
// CHECK: %[[WG:.*]] = arith.divui {{.*}}, %c128_i32{{.*}} : i32
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %[[WG]], %c0_i32{{.*}} : i32
// CHECK: scf.if %[[MINE]]
// CHECK:   nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: arith.cmpi eq, %[[WG]], %c1_i32{{.*}} : i32
// CHECK: nvvm.cp.async.commit.group
// Barriers order thread writes before wgmma reads them.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
tile.kernel @split_gather(%kv: memref<?x64xbf16>, %rows: memref<64xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %t = tile.gather_rows %kv[%r, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
  tile.wait %t
}

// A transposed store writes element by element, each under its bound.
// CHECK-LABEL: gpu.func @transposed_store
// CHECK-NOT: vector<2xf32>
// CHECK: scf.if
// CHECK:   llvm.store {{.*}} : f32, !llvm.ptr<1>
tile.kernel @transposed_store(%out: memref<?x?xf32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %x = tile.splat %one : !tile.reg<64x16xf32, #tile.mma>
  tile.store %x, %out[%c0, %c0] bounds [%n, %c64] {transpose} : !tile.reg<64x16xf32, #tile.mma>, memref<?x?xf32>
}

// A bounded load of 2-element runs reads both at once only when the last
// is in bounds; else each element under its own bound (odd head counts).
// CHECK-LABEL: gpu.func @split_run_load
// CHECK: %[[ALL:.*]] = arith.cmpi slt
// CHECK: scf.if %[[ALL]] -> (vector<2xf32>)
// CHECK:   llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK: } else {
// CHECK:   llvm.load {{.*}} : !llvm.ptr<1> -> f32
tile.kernel @split_run_load(%in: memref<?xf32>, %out: memref<?x?xf32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %inf = arith.constant 0x7F800000 : f32
  %v = tile.load %in[%c0] bounds [%n] pad %inf : memref<?xf32>, f32 -> !tile.reg<16xf32, #tile.slice<dim = 0, parent = #tile.mma>>
  %b = tile.broadcast %v along 0 : !tile.reg<16xf32, #tile.slice<dim = 0, parent = #tile.mma>> -> !tile.reg<64x16xf32, #tile.mma>
  tile.store %b, %out[%c0, %c0] : !tile.reg<64x16xf32, #tile.mma>, memref<?x?xf32>
}
