// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-pipeline-loops))' -split-input-file -verify-diagnostics | FileCheck %s
// Two stages: a ring of two buffers, the gather of iteration 0 before the
// loop, and in iteration i a wait for its copies, then the gather of i+1
// with rows past the end masked to -1. The gather's row indices are loaded
// one iteration earlier still: those of iteration 1 before the loop, those
// of i+2 in iteration i, carried to the next one as an iter_arg. The body's
// own load of its indices (for the compute) is issued before the wait.

// CHECK-LABEL: tile.kernel @gather_loop
// CHECK: %[[RING:.*]] = tile.alloc : !tile.smem<2x64x64xbf16>
// CHECK: %[[ROWS0:.*]] = tile.load %{{.*}}[%c0, %c0{{.*}}]
// CHECK: tile.gather_rows %{{.*}}[%{{.*}}, %c0] into {{.*}} : memref<?x64xbf16>
// CHECK: %[[ONE:.*]] = arith.addi %c0{{.*}}, %{{.*}} : index
// CHECK: %[[ROWS1:.*]] = tile.load %{{.*}}[%c0, %[[ONE]]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[NEXT:.*]] = %[[ROWS1]]) -> (!tile.reg<64xi32>)
// CHECK:   tile.load %{{.*}}[%c0, %[[J]]]
// CHECK:   tile.async_wait 0
// CHECK:   tile.barrier
// CHECK-NOT: tile.load
// CHECK:   tile.map %[[NEXT]]
// CHECK:     arith.select
// CHECK:   tile.gather_rows
// CHECK:   %[[TWO:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK:   %[[AHEAD:.*]] = tile.load %{{.*}}[%c0, %[[TWO]]]
// CHECK:   tile.slice %[[RING]]
// CHECK:   tile.read
// CHECK:   scf.yield %[[AHEAD]]
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
// The account is the kernel's shared plan (SharedMemoryPlan.h), which counts
// each tile with the layout tile-assign-layouts will give it: here twelve
// 8 x 8 f32 stages whose 32-byte rows get a 32-byte swizzle, each stage on
// its own 1024-byte atom (12 KiB, not 3). Three 72 KiB stages and those do
// not fit in 227 KiB; two stages do.
// CHECK-LABEL: tile.kernel @fit_with_layouts
// CHECK: tile.alloc : !tile.smem<2x64x576xbf16>
tile.kernel @fit_with_layouts(%kv: memref<?x576xbf16>, %idx: memref<?x?xi32>, %out: memref<?x576xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1 : i32
  %small = tile.alloc : !tile.smem<12x8x8xf32>
  %buf = tile.alloc : !tile.smem<64x576xbf16>
  tile.pipelined_for %j = %c0 to %n step %c64 stages(3) {
    %rows = tile.load %idx[%c0, %j] bounds [%n] pad %m1 : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x576xbf16>, !tile.reg<64xi32>, !tile.smem<64x576xbf16>
    tile.wait %t
    %v = tile.read %buf : !tile.smem<64x576xbf16> -> !tile.reg<64x576xbf16>
    tile.store %v, %out[%j, %c0] : !tile.reg<64x576xbf16>, memref<?x576xbf16>
  }
}

// The rows of the gather come from a tile.map whose body uses a value of the
// loop body (as smla-lower-to-tile writes smla.key_rows): the prologue's and
// the loop's clones of the map take their own clone of that value.
// CHECK-LABEL: tile.kernel @map_captures
// CHECK: %[[BASE0:.*]] = arith.index_cast %c0{{.*}} : index to i32
// CHECK: tile.map
// CHECK: arith.addi %{{.*}}, %[[BASE0]] : i32
// CHECK: tile.gather_rows
// CHECK: scf.for %[[J:.*]] = {{.*}} {
// CHECK:   tile.barrier
// CHECK:   %[[BASE:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK:   tile.map
// CHECK:   arith.addi %{{.*}}, %[[BASE]] : i32
// CHECK:   tile.gather_rows
tile.kernel @map_captures(%kv: memref<?x64xbf16>, %idx: memref<?x?xi32>, %out: memref<?x64xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1 : i32
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  tile.pipelined_for %j = %c0 to %n step %c64 stages(2) {
    %keys = tile.load %idx[%c0, %j] bounds [%n] pad %m1 : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
    %base = arith.index_cast %j : index to i32
    %rows = tile.map %keys : !tile.reg<64xi32> -> !tile.reg<64xi32> {
    ^bb0(%k: i32):
      %r = arith.addi %k, %base : i32
      tile.yield %r : i32
    }
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.wait %t
    %v = tile.read %buf : !tile.smem<64x64xbf16> -> !tile.reg<64x64xbf16>
    tile.store %v, %out[%j, %c0] : !tile.reg<64x64xbf16>, memref<?x64xbf16>
  }
}
// -----
// The copies run ahead of the body: they cannot use what the body computes.
tile.kernel @iter_dependent(%kv: memref<?x64xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m1 = arith.constant -1 : i32
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  %init = tile.splat %m1 : !tile.reg<64xi32>
  // expected-error @+1 {{copies depend on iter_arg #0; they cannot run ahead}}
  %r = tile.pipelined_for %i = %c0 to %n step %c1 stages(2) iter_args(%rows = %init) -> (!tile.reg<64xi32>) {
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.wait %t
    tile.yield %rows : !tile.reg<64xi32>
  }
}
// -----
// The copies also run for iterations past the end: their loads need bounds.
tile.kernel @unbounded_load(%kv: memref<?x64xbf16>, %idx: memref<?x64xi32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  tile.pipelined_for %i = %c0 to %n step %c1 stages(2) {
    // expected-error @+1 {{feeds a pipelined copy and so also runs for iterations past the end: it needs bounds}}
    %rows = tile.load %idx[%i, %c0] : memref<?x64xi32> -> !tile.reg<64xi32>
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.wait %t
  }
}
// -----
tile.kernel @effects_before_copy(%kv: memref<?x64xbf16>, %pos: memref<?xi32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  %p = tile.iota along 0 : !tile.reg<64xi32>
  tile.pipelined_for %i = %c0 to %n step %c1 stages(2) {
    // expected-error @+1 {{feeds a pipelined copy but has side effects}}
    %rows = tile.atomic_rmw add %p, %pos[%p] : !tile.reg<64xi32>, memref<?xi32>, !tile.reg<64xi32>
    %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.wait %t
  }
}
// -----
tile.kernel @buffer_in_the_loop(%kv: memref<?x64xbf16>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = tile.iota along 0 : !tile.reg<64xi32>
  %all = tile.alloc : !tile.smem<2x64x64xbf16>
  tile.pipelined_for %i = %c0 to %n step %c1 stages(2) {
    %buf = tile.slice %all[%c1, %c0, %c0] : !tile.smem<2x64x64xbf16> to !tile.smem<64x64xbf16>
    // expected-error @+1 {{in a pipelined loop must copy into a tile.alloc made before the loop}}
    %t = tile.gather_rows %kv[%p, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.wait %t
  }
}
// -----
// expected-error @+1 {{has shape parameters; run tile-specialize first}}
tile.kernel @generic() warpgroups(1) variants([{n = 64}]) {
  %a = tile.alloc : !tile.smem<64x{n}xbf16>
}

