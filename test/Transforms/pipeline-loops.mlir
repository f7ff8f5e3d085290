// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-pipeline-loops))' | FileCheck %s
// Two stages: a ring of two buffers, the gather of iteration 0 before the
// loop, and in iteration i a wait for its copies, then the gather of i+1
// with rows past the end masked to -1.

// CHECK-LABEL: tile.kernel @gather_loop
// CHECK: %[[RING:.*]] = tile.alloc : !tile.smem<2x64x64xbf16>
// CHECK: tile.gather_rows {{.*}} into {{.*}} : memref<?x64xbf16>
// CHECK: scf.for
// CHECK:   tile.async_wait 0
// CHECK:   tile.barrier
// CHECK:   tile.map
// CHECK:     arith.select
// CHECK:   tile.gather_rows
// CHECK:   tile.slice %[[RING]]
// CHECK:   tile.read
// CHECK: tile.async_wait 0
tile.kernel @gather_loop(%kv: memref<?x64xbf16>, %idx: memref<?x?xi32>, %out: memref<?x64xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1 : i32
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  tile.pipelined_for %j = %c0 to %n step %c64 stages(2) {
    %rows = tile.load %idx[%c0, %j] bounds [%n] pad %m1 : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.wait %t
    %v = tile.read %buf : !tile.smem<64x64xbf16> -> !tile.reg<64x64xbf16>
    tile.store %v, %out[%j, %c0] : !tile.reg<64x64xbf16>, memref<?x64xbf16>
  }
}

// `stages` is a maximum: with the other 72 KiB tile, three 72 KiB stages do
// not fit in 227 KiB and two do; with a 144 KiB one, only one stage fits.
// CHECK-LABEL: tile.kernel @fit_two
// CHECK: tile.alloc : !tile.smem<2x64x576xbf16>
// CHECK-LABEL: tile.kernel @fit_one
// CHECK-NOT: tile.alloc : !tile.smem<{{[0-9]+}}x64x576xbf16>
// CHECK: tile.alloc : !tile.smem<64x576xbf16>
// CHECK: scf.for
// CHECK:   tile.async_wait 0
tile.kernel @fit_two(%kv: memref<?x576xbf16>, %idx: memref<?x?xi32>, %out: memref<?x576xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1 : i32
  %other = tile.alloc : !tile.smem<64x576xbf16>
  %buf = tile.alloc : !tile.smem<64x576xbf16>
  tile.pipelined_for %j = %c0 to %n step %c64 stages(3) {
    %rows = tile.load %idx[%c0, %j] bounds [%n] pad %m1 : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x576xbf16>, !tile.reg<64xi32>, !tile.smem<64x576xbf16>
    tile.wait %t
    %v = tile.read %buf : !tile.smem<64x576xbf16> -> !tile.reg<64x576xbf16>
    tile.write %v, %other : !tile.reg<64x576xbf16>, !tile.smem<64x576xbf16>
  }
}
tile.kernel @fit_one(%kv: memref<?x576xbf16>, %idx: memref<?x?xi32>, %out: memref<?x576xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1 : i32
  %other = tile.alloc : !tile.smem<128x576xbf16>
  %buf = tile.alloc : !tile.smem<64x576xbf16>
  tile.pipelined_for %j = %c0 to %n step %c64 stages(2) {
    %rows = tile.load %idx[%c0, %j] bounds [%n] pad %m1 : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x576xbf16>, !tile.reg<64xi32>, !tile.smem<64x576xbf16>
    tile.wait %t
    %v = tile.read %buf : !tile.smem<64x576xbf16> -> !tile.reg<64x576xbf16>
    tile.store %v, %out[%j, %c0] : !tile.reg<64x576xbf16>, memref<?x576xbf16>
  }
}
