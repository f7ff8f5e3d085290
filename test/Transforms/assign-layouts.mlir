// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-assign-layouts))' -split-input-file -verify-diagnostics | FileCheck %s
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

// Ops whose tiles share a layout tie them: a gather's positions and result,
// an atomic's value, positions and old values. A single row spreads over the
// warpgroup (lanes = 128), 4-byte runs where 16 bytes do not fit.
// CHECK-LABEL: tile.kernel @same_layout
tile.kernel @same_layout(%m: memref<?xi32>) warpgroups(1) {
  // CHECK: tile.iota along 1 : !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>
  %i = tile.iota along 1 : !tile.reg<1x1024xi32>
  %s = tile.alloc : !tile.smem<1x1024xi32>
  // CHECK: tile.atomic_rmw  or {{.*}} : !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>,
  // CHECK-SAME: !tile.smem<1x1024xi32, #tile.shared<swizzle = 0, pitch = 4096, block_stride = 4096>>, !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>
  %o = tile.atomic_rmw or %i, %s[%i] : !tile.reg<1x1024xi32>, !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32>
  // CHECK: tile.iota along 1 : !tile.reg<1x128xi32, #tile.blocked<vector = 1, lanes = 128>>
  %j = tile.iota along 1 : !tile.reg<1x128xi32>
  // CHECK: tile.gather {{.*}} -> !tile.reg<1x128xi32, #tile.blocked<vector = 1, lanes = 128>>
  %g = tile.gather %m[%j] : memref<?xi32>, !tile.reg<1x128xi32> -> !tile.reg<1x128xi32>
  tile.scatter %g, %m[%j] : !tile.reg<1x128xi32>, memref<?xi32>, !tile.reg<1x128xi32>
}

// Positions needed in two layouts (a gather of rows wants the rows of its
// coalesced layout, a per-column gather broadcast into an mma tile the
// column slice of #tile.mma): the iota and map that compute them are cloned,
// and a row store takes the column slice of its transposed value.
// CHECK-LABEL: tile.kernel @cloned_positions
tile.kernel @cloned_positions(%q: memref<?x64xbf16>, %lse: memref<?xf32>, %out: memref<?x?xf32>,
                              %dq: memref<?x64xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %z = arith.constant 0.0 : f32
  // CHECK-DAG: tile.iota along 0 : !tile.reg<16xi32, #tile.slice<dim = 1, parent = #tile.blocked<vector = 8, lanes = 8>>>
  // CHECK-DAG: tile.iota along 0 : !tile.reg<16xi32, #tile.slice<dim = 0, parent = #tile.mma>>
  %c = tile.iota along 0 : !tile.reg<16xi32>
  %rows = tile.map %c : !tile.reg<16xi32> -> !tile.reg<16xi32> {
  ^bb0(%x: i32):
    %r = arith.addi %x, %one : i32
    tile.yield %r : i32
  }
  %buf = tile.alloc : !tile.smem<16x64xbf16>
  %t = tile.gather_rows %q[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<16xi32>, !tile.smem<16x64xbf16>
  tile.wait %t
  // CHECK: tile.gather {{.*}} -> !tile.reg<16xf32, #tile.slice<dim = 0, parent = #tile.mma>>
  %l = tile.gather %lse[%rows] pad %z : memref<?xf32>, !tile.reg<16xi32>, f32 -> !tile.reg<16xf32>
  %b = tile.broadcast %l along 0 : !tile.reg<16xf32> -> !tile.reg<64x16xf32>
  %s = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.gemm %s, %buf, %b {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<16x64xbf16>, !tile.reg<64x16xf32>
  tile.store %acc, %out[%c0, %c0] : !tile.reg<64x16xf32>, memref<?x?xf32>
  // CHECK: tile.store_rows {{.*}} {transpose} : !tile.reg<64x16xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<16xi32, #tile.slice<dim = 0, parent = #tile.mma>>
  tile.store_rows %acc, %dq[%rows, %c0] {transpose} : !tile.reg<64x16xf32>, memref<?x64xf32>, !tile.reg<16xi32>
}
// -----
// Rows wanted in two layouts from an op that cannot be repeated (an atomic).
tile.kernel @conflict(%kv: memref<?x64xbf16>, %ws: memref<?x64xf32>, %pos: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %p = tile.iota along 0 : !tile.reg<64xi32>
  // expected-note @+1 {{tile defined here}}
  %rows = tile.atomic_rmw add %p, %pos[%p] : !tile.reg<64xi32>, memref<?xi32>, !tile.reg<64xi32>
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  %t = tile.gather_rows %kv[%rows, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
  tile.wait %t
  %x = tile.splat %one : !tile.reg<64x8xf32, #tile.mma>
  // expected-error @+1 {{tile needs layout #tile.slice<dim = 1, parent = #tile.mma> here but has}}
  tile.scatter_add_rows %x, %ws[%rows, %c0] : !tile.reg<64x8xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<64xi32>
}
// -----
tile.kernel @uncoalesced_gather(%kv: memref<?x64xbf16>, %idx: memref<3xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %r = tile.load %idx[%c0] : memref<3xi32> -> !tile.reg<3xi32>
  %buf = tile.alloc : !tile.smem<3x64xbf16>
  // expected-error @+1 {{has no coalesced layout for}}
  %t = tile.gather_rows %kv[%r, %c0] into %buf : memref<?x64xbf16>, !tile.reg<3xi32>, !tile.smem<3x64xbf16>
}
// -----
tile.kernel @no_layout_fits(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{no layout fits '!tile.reg<3x5xf32>'}}
  %x = tile.splat %one : !tile.reg<3x5xf32>
  tile.store %x, %out[%c0, %c0] : !tile.reg<3x5xf32>, memref<?x?xf32>
}
// -----
tile.kernel @slice_rows(%i: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a = tile.alloc : !tile.smem<64x64xbf16>
  // The slice's verifier, once the pass gave the tile its swizzle:
  // expected-error @+1 {{starts at a row only known to be a multiple of 4, inside a swizzle atom of 8 rows}}
  %s = tile.slice %a[%c4, %c0] : !tile.smem<64x64xbf16> to !tile.smem<8x64xbf16>
}
// -----
// A slice 16 bytes in: no swizzle keeps its atoms, so none (a GEMM reading
// the tile would say it needs one).
// CHECK-LABEL: tile.kernel @slice_columns
tile.kernel @slice_columns() warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  // CHECK: tile.alloc : !tile.smem<64x128xbf16, #tile.shared<swizzle = 0, pitch = 256, block_stride = 16384>>
  %a = tile.alloc : !tile.smem<64x128xbf16>
  %s = tile.slice %a[%c0, %c8] : !tile.smem<64x128xbf16> to !tile.smem<64x64xbf16>
}
// -----
// Each warpgroup writes its 32 columns of one 64-column tile: the swizzle
// is the widest whose atoms those slices keep whole (64 bytes, not 128).
// CHECK-LABEL: tile.kernel @columns_per_warpgroup
tile.kernel @columns_per_warpgroup() warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %wg = tile.warpgroup_id
  %first = arith.muli %wg, %c32 : index
  // CHECK: tile.alloc : !tile.smem<64x64xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %s = tile.slice %a[%c0, %first] : !tile.smem<64x64xbf16> to !tile.smem<64x32xbf16>
}
// -----
tile.kernel @slice_across_blocks() warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %a = tile.alloc : !tile.smem<8x128xf32, #tile.shared<swizzle = 0, pitch = 256, block_stride = 2048>>
  // An unswizzled tile's slice may start inside a column block, not run past it.
  %in = tile.slice %a[%c0, %c32] : !tile.smem<8x128xf32, #tile.shared<swizzle = 0, pitch = 256, block_stride = 2048>> to !tile.smem<8x32xf32>
  // expected-error @+1 {{column offset 32 runs across a 256-byte column block}}
  %s = tile.slice %a[%c0, %c32] : !tile.smem<8x128xf32, #tile.shared<swizzle = 0, pitch = 256, block_stride = 2048>> to !tile.smem<8x64xf32>
}
// -----
tile.kernel @slice_layout() warpgroups(1) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : !tile.smem<64x64xbf16>
  // expected-error @+1 {{result layout differs from the source's}}
  %s = tile.slice %a[%c0, %c0] : !tile.smem<64x64xbf16> to !tile.smem<64x64xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>
}


// -----

!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @slice_channel_buffer() warpgroups(2) {
  %c0 = arith.constant 0 : index
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    %out = tile.get_enter %ch : !chan
    // expected-error @+1 {{slices a tile that has no layout}}
    %s = tile.slice %out[%c0, %c0] : !tile.smem<64x64xbf16> to !tile.smem<32x64xbf16>
    tile.get_exit %ch : !chan
  }
}

// -----

tile.kernel @reduce_narrow(%out: memref<?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{tile of shape '!tile.reg<8x32xf32>' cannot take layout #tile.blocked<vector = 4, lanes = 16>: #tile.blocked<vector = 4, lanes = 16> covers 8x64 blocks, which do not tile 8x32}}
  %x = tile.splat %one : !tile.reg<8x32xf32>
  %r = tile.reduce add %x along 1 : !tile.reg<8x32xf32> -> !tile.reg<8xf32, #tile.slice<dim = 1, parent = #tile.blocked<vector = 4, lanes = 16>>>
  tile.store %r, %out[%c0] : !tile.reg<8xf32, #tile.slice<dim = 1, parent = #tile.blocked<vector = 4, lanes = 16>>>, memref<?xf32>
}
