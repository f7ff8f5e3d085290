// Input of split-d.mlir's second RUN (chunk = 24): an interleaved
// destination is cut into whole 16-column groups only.
tile.kernel @interleaved_chunk(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %b = tile.alloc : !tile.smem<16x96xbf16>
  %a = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x96xf32>
  %x = tile.gemm %a, %b, %z : !tile.smem<64x16xbf16>, !tile.smem<16x96xbf16>, !tile.reg<64x96xf32>
  // expected-error @+1 {{tile-split-d: an interleaved destination takes chunks of 16 columns, not 24}}
  tile.scatter_add_rows %x, %dkv[%rows, %c0] {interleaved} : !tile.reg<64x96xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}
