// Postprocess of the sparse-MLA backward: the f32 dKV workspace that the main
// kernel accumulates into with atomics becomes dKV, [rows, Dqk], in bf16 or,
// where `dkv_f32` has rows, in f32. The workspace's columns are interleaved in
// groups of 16 (the order in which the atomics add them); the output's are in
// their natural order. One warpgroup converts 64 rows, 64 columns at a time.
tile.kernel @sparse_mla_postprocess(%ws: memref<?x?xf32>, %dkv: memref<?x?xbf16>,
                                    %dkv_f32: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %rows = memref.dim %ws, %c0 : memref<?x?xf32>
  %cols = memref.dim %ws, %c1 : memref<?x?xf32>
  %f32_rows = memref.dim %dkv_f32, %c0 : memref<?x?xf32>
  %to_f32 = arith.cmpi ugt, %f32_rows, %c0 : index
  %block = tile.block_id x
  %r0 = arith.muli %block, %c64 : index
  scf.for %c = %c0 to %cols step %c64 {
    %x = tile.load %ws[%r0, %c] bounds [%rows, %cols] pad %pad {interleaved}
        : memref<?x?xf32>, f32 -> !tile.reg<64x64xf32>
    scf.if %to_f32 {
      tile.store %x, %dkv_f32[%r0, %c] bounds [%rows, %cols] : !tile.reg<64x64xf32>, memref<?x?xf32>
    } else {
      %y = tile.map %x : !tile.reg<64x64xf32> -> !tile.reg<64x64xbf16> {
      ^bb0(%a: f32):
        %b = arith.truncf %a : f32 to bf16
        tile.yield %b : bf16
      }
      tile.store %y, %dkv[%r0, %c] bounds [%rows, %cols] : !tile.reg<64x64xbf16>, memref<?x?xbf16>
    }
  }
}
