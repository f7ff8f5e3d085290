// RUN: sparse-mla-opt %s --split-input-file --pass-pipeline='builtin.module(tile.kernel(tile-stage-scatters))' | FileCheck %s
// Each warpgroup gets one staging tile per value shape (unswizzled, rows of
// 64 f32 padded to 272 bytes); all scatters of that shape use it.

// CHECK-LABEL: tile.kernel @two_pieces
// CHECK: %[[WG:.*]] = tile.warpgroup_id
// CHECK: %[[ALL:.*]] = tile.alloc : !tile.smem<2x64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
// CHECK: %[[MINE:.*]] = tile.slice %[[ALL]][%[[WG]], %{{.*}}, %{{.*}}] {{.*}} to !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
// CHECK-NOT: tile.alloc : !tile.smem<2x64x64xf32
// CHECK: tile.scatter_add_rows {{.*}} staging %[[MINE]]
// CHECK: tile.scatter_add_rows {{.*}} staging %[[MINE]]
tile.kernel @two_pieces(%ws: memref<?x?xf32>, %idx: memref<?xi32>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1 : i32
  %one = arith.constant 1.0 : f32
  %rows = tile.load %idx[%c0] bounds [%n] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %v = tile.splat %one : !tile.reg<64x64xf32>
  tile.scatter_add_rows %v, %ws[%rows, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  tile.scatter_add_rows %v, %ws[%rows, %c64] : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// No room: with 200 KiB of other tiles, two 17 KiB staging tiles do not fit
// in 227 KiB, and the scatter stays on red.global.add.
// CHECK-LABEL: tile.kernel @no_room
// CHECK-NOT: staging
tile.kernel @no_room(%ws: memref<?x?xf32>, %idx: memref<?xi32>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : i32
  %one = arith.constant 1.0 : f32
  %big = tile.alloc : !tile.smem<160x640xbf16>
  %rows = tile.load %idx[%c0] bounds [%n] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %v = tile.splat %one : !tile.reg<64x64xf32>
  tile.scatter_add_rows %v, %ws[%rows, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}
