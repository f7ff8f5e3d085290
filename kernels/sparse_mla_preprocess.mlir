// Preprocess of the sparse-MLA backward:
//   Delta[r] = sum_d O[r, d] * dO[r, d]   in f32, for every row r = (b, s, h)
// O and dO are bf16 [rows, D] (the [B, S, H, D] tensors with their leading
// dimensions merged; rows may be apart by more than D: views of wider
// matrices). One warpgroup handles 64 rows, 64 columns at a time.
!rows = memref<?x?xbf16, strided<[?, 1]>>

tile.kernel @sparse_mla_preprocess(%o: !rows [?, ?], %do: !rows [%o[0], %o[1]],
                                   %delta: memref<?xf32> [%o[0]]) warpgroups(1)
    grid([block : %o[0] ceildiv 64]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %pad = arith.constant 0.0 : bf16
  %rows = memref.dim %o, %c0 : !rows
  %d = memref.dim %o, %c1 : !rows
  %block = tile.work_id "block"
  %r0 = arith.muli %block, %c64 : index
  %init = tile.splat %zero : !tile.reg<64xf32>
  %sum = scf.for %c = %c0 to %d step %c64 iter_args(%acc = %init) -> (!tile.reg<64xf32>) {
    %x = tile.load %o[%r0, %c] bounds [%rows, %d] pad %pad
        : !rows, bf16 -> !tile.reg<64x64xbf16>
    %y = tile.load %do[%r0, %c] bounds [%rows, %d] pad %pad
        : !rows, bf16 -> !tile.reg<64x64xbf16>
    %xy = tile.map %x, %y : !tile.reg<64x64xbf16>, !tile.reg<64x64xbf16> -> !tile.reg<64x64xf32> {
    ^bb0(%a: bf16, %b: bf16):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %p = arith.mulf %af, %bf : f32
      tile.yield %p : f32
    }
    %part = tile.reduce add %xy along 1 : !tile.reg<64x64xf32> -> !tile.reg<64xf32>
    %next = tile.map %acc, %part : !tile.reg<64xf32>, !tile.reg<64xf32> -> !tile.reg<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tile.yield %s : f32
    }
    scf.yield %next : !tile.reg<64xf32>
  }
  tile.store %sum, %delta[%r0] bounds [%rows] : !tile.reg<64xf32>, memref<?xf32>
}
