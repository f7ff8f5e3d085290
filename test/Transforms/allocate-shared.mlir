// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-allocate-shared))' -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: tile.kernel @two
// CHECK-SAME: tile.shared_bytes = 40960
// CHECK: tile.alloc {offset = 0 : i64} : !tile.smem<2x64x64xbf16>
// CHECK: tile.alloc {offset = 16384 : i64} : !tile.smem<64x192xbf16>
tile.kernel @two() warpgroups(1) {
  %a = tile.alloc : !tile.smem<2x64x64xbf16>
  %b = tile.alloc : !tile.smem<64x192xbf16>
}
// -----
// expected-error @+1 {{needs 294912 bytes of shared memory, more than the 232432 a CTA may use}}
tile.kernel @big() warpgroups(1) {
  %a = tile.alloc : !tile.smem<256x576xbf16>
}
// -----
// Swizzled tiles start on 1024-byte atoms and come first; the others follow
// on 16 bytes, so that a small table pads nothing: 32768 + 512 + 16.
// CHECK-LABEL: tile.kernel @swizzled_first
// CHECK-SAME: tile.shared_bytes = 33296
// CHECK: tile.alloc {offset = 32768 : i64} : !tile.smem<2x64xf32>
// CHECK: tile.alloc {offset = 0 : i64} : !tile.smem<64x256xbf16, #tile.shared<swizzle = 128
// CHECK: tile.alloc {offset = 33280 : i64} : !tile.smem<1x2xi64>
tile.kernel @swizzled_first() warpgroups(1) {
  %t = tile.alloc : !tile.smem<2x64xf32>
  %a = tile.alloc : !tile.smem<64x256xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  %b = tile.alloc : !tile.smem<1x2xi64>
}
// -----
// A layout with padded rows takes rows x pitch bytes: 64 x 272 per stage.
// A tile without a layout is placed with the one tile-assign-layouts will
// give it (a 128-byte swizzle: first, on an atom), as the passes before
// layouts count it.
// CHECK-LABEL: tile.kernel @padded
// CHECK-SAME: tile.shared_bytes = 43008
// CHECK: tile.alloc {offset = 8192 : i64} : !tile.smem<2x64x64xf32
// CHECK: tile.alloc {offset = 0 : i64} : !tile.smem<64x64xbf16>
tile.kernel @padded() warpgroups(1) {
  %a = tile.alloc : !tile.smem<2x64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  %b = tile.alloc : !tile.smem<64x64xbf16>
}
// -----
// A scan whose rows span the warps of a warpgroup needs scratch for their
// totals: 2 runs of a thread x 4 warps x 4 bytes per warpgroup, after the
// tiles, for each warpgroup: warpgroup 0's at 64, a stride of 32.
// CHECK-LABEL: tile.kernel @scan_scratch
// CHECK-SAME: tile.shared_bytes = 128
// CHECK: tile.scan  add %{{.*}} {scratch = array<i64: 64, 32>}
tile.kernel @scan_scratch() warpgroups(2) {
  %a = tile.alloc : !tile.smem<1x16xi32>
  %x = tile.iota along 1 : !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>
  %s = tile.scan add %x : !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>
}
// -----
// Rows of 64 lanes: two rows per pass, two warps each; every warp still
// has its own total per run (1 run x 4 warps x 4 bytes).
// CHECK-LABEL: tile.kernel @scan_two_rows
// CHECK-SAME: tile.shared_bytes = 80
// CHECK: tile.scan  add %{{.*}} {scratch = array<i64: 64, 16>}
tile.kernel @scan_two_rows() warpgroups(1) {
  %a = tile.alloc : !tile.smem<1x16xi32>
  %x = tile.iota along 1 : !tile.reg<2x256xi32, #tile.blocked<vector = 4, lanes = 64>>
  %s = tile.scan add %x : !tile.reg<2x256xi32, #tile.blocked<vector = 4, lanes = 64>>
}
// -----
// A layout conversion needs its tile's bytes of scratch per warpgroup; one
// to the same layout, none.
// CHECK-LABEL: tile.kernel @convert_scratch
// CHECK-SAME: tile.shared_bytes = 32768
// CHECK: tile.convert_layout %{{.*}} {scratch = array<i64: 0, 16384>}
// CHECK-NOT: scratch
tile.kernel @convert_scratch(%x: f32) warpgroups(2) {
  %b = tile.splat %x : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
  %m = tile.convert_layout %b : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>> -> !tile.reg<64x64xf32, #tile.mma>
  %s = tile.convert_layout %m : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64x64xf32, #tile.mma>
}
// -----
// Ops that exchange values share their warpgroup's region, as large as the
// largest op's (each begins with a barrier of its warpgroup): a 16 KiB
// conversion and a 32-byte scan take 2 x 16 KiB, not 2 x (16 KiB + 32).
// CHECK-LABEL: tile.kernel @shared_scratch
// CHECK-SAME: tile.shared_bytes = 32768
// CHECK: tile.convert_layout %{{.*}} {scratch = array<i64: 0, 16384>}
// CHECK: tile.scan  add %{{.*}} {scratch = array<i64: 0, 16384>}
tile.kernel @shared_scratch(%x: f32) warpgroups(2) {
  %b = tile.splat %x : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
  %m = tile.convert_layout %b : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>> -> !tile.reg<64x64xf32, #tile.mma>
  %i = tile.iota along 1 : !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>
  %s = tile.scan add %i : !tile.reg<1x1024xi32, #tile.blocked<vector = 4, lanes = 128>>
}
