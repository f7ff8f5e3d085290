// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %s --sparse-mla-to-ptx="output=%t/probe" -o /dev/null
// RUN: FileCheck %s < %t/probe.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/probe.json
// GPU probe of tile.convert_layout (test/python/test_gpu_convert_layout.py):
// each warpgroup takes 64-row blocks of `src` in turn (warpgroup w: blocks
// w, w + 2, ...), loads one in a coalesced layout, converts it to the wgmma
// accumulator's, adds 1, stores that to `mma_out`, converts it back and
// stores it to `back_out`. Both must equal src + 1 for any number of rows;
// the two conversions share one scratch region per warpgroup, and each
// block's reuse that of the block before.
// The PTX: per conversion, the warpgroup's barrier, its stores into its
// scratch, the barrier again, its loads in the other layout.
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK: st.shared.v4.b32
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK: ld.shared.v2.b32
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK: st.shared.v2.b32
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK: ld.shared.v4.b32
// One region of 16 KiB, shared by the two conversions, for each of two
// warpgroups:
// JSON: "shared_bytes": 32768,
!coalesced = !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
!acc = !tile.reg<64x64xf32, #tile.mma>
tile.kernel @convert_layout_probe(%src: memref<?x64xf32>, %mma_out: memref<?x64xf32>,
                                  %back_out: memref<?x64xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %pad = arith.constant 0.0 : f32
  %rows = memref.dim %src, %c0 : memref<?x64xf32>
  %blocks = arith.ceildivui %rows, %c64 : index
  %wg = tile.warpgroup_id
  scf.for %b = %wg to %blocks step %c2 {
    %r0 = arith.muli %b, %c64 : index
    %x = tile.load %src[%r0, %c0] bounds [%rows, %c64] pad %pad : memref<?x64xf32>, f32 -> !coalesced
    %m = tile.convert_layout %x : !coalesced -> !acc
    %y = tile.map %m : !acc -> !acc {
    ^bb0(%v: f32):
      %w = arith.addf %v, %one : f32
      tile.yield %w : f32
    }
    tile.store %y, %mma_out[%r0, %c0] bounds [%rows, %c64] : !acc, memref<?x64xf32>
    %back = tile.convert_layout %y : !acc -> !coalesced
    tile.store %back, %back_out[%r0, %c0] bounds [%rows, %c64] : !coalesced, memref<?x64xf32>
  }
}
