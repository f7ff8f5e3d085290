// Postprocess of the sparse-MLA backward: the dKV workspace that the main
// kernel accumulates into becomes dKV, [rows, Dqk], in bf16 or, where
// `dkv_f32` has rows, in f32; with `accumulate` != 0 it is added to what the
// output holds (a caller's accumulator across micro-batches or ranks). The
// workspace is f32 with its columns interleaved in groups of 16 (the order
// in which the atomics add them), or, where `fixed` has rows, i64 fixed
// point in the natural order, `unit` each (the deterministic mode), where a
// row that `lost` flags (an addition that did not convert: not finite or out
// of range, so the row is not its sum) comes out NaN. The
// output's rows may be apart by more than their width (a view).
// One warpgroup converts 64 rows, 64 columns at a time.
!bf16_rows = memref<?x?xbf16, strided<[?, 1]>>
!f32_rows = memref<?x?xf32, strided<[?, 1]>>
!f32_tile = !tile.reg<64x64xf32>
!i64_tile = !tile.reg<64x64xi64>
!bf16_tile = !tile.reg<64x64xbf16>

// Exactly one of ws and fixed is given, and one of dkv and dkv_f32: a sum
// of their sizes is the size of the one given.
tile.kernel @sparse_mla_postprocess(%ws: memref<?x?xf32> [?, ?] optional,
                                    %fixed: memref<?x?xi64> [?, ?] optional,
                                    %lost: memref<?xi32> [%fixed[0]] optional,
                                    %dkv: !bf16_rows [%ws[0] + %fixed[0], %ws[1] + %fixed[1]] optional,
                                    %dkv_f32: !f32_rows [%ws[0] + %fixed[0], %ws[1] + %fixed[1]] optional,
                                    %accumulate: i32, %unit: f32) warpgroups(1)
    grid([block : (%ws[0] + %fixed[0]) ceildiv 64]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %pad_i64 = arith.constant 0 : i64
  %pad_bf16 = arith.constant 0.0 : bf16
  %nan = arith.constant 0x7FC00000 : f32
  %zero = arith.constant 0 : i32
  %fixed_rows = memref.dim %fixed, %c0 : memref<?x?xi64>
  %from_fixed = arith.cmpi ugt, %fixed_rows, %c0 : index
  %ws_rows = memref.dim %ws, %c0 : memref<?x?xf32>
  %rows = arith.maxui %ws_rows, %fixed_rows : index
  // The columns of the output given (the other is empty).
  %bf16_cols = memref.dim %dkv, %c1 : !bf16_rows
  %f32_cols = memref.dim %dkv_f32, %c1 : !f32_rows
  %cols = arith.maxui %bf16_cols, %f32_cols : index
  %out_rows = memref.dim %dkv_f32, %c0 : !f32_rows
  %to_f32 = arith.cmpi ugt, %out_rows, %c0 : index
  %adds = arith.cmpi ne, %accumulate, %zero : i32
  %lost_rows = memref.dim %lost, %c0 : memref<?xi32>
  %block = tile.work_id "block"
  %r0 = arith.muli %block, %c64 : index
  // The rows' flags (none read where `lost` is empty).
  %flag = tile.load %lost[%r0] bounds [%lost_rows] pad %zero
      : memref<?xi32>, i32 -> !tile.reg<64xi32>
  scf.for %c = %c0 to %cols step %c64 {
    %x = scf.if %from_fixed -> (!f32_tile) {
      %n = tile.load %fixed[%r0, %c] bounds [%rows, %cols] pad %pad_i64
          : memref<?x?xi64>, i64 -> !i64_tile
      %flags = tile.broadcast %flag along 1 : !tile.reg<64xi32> -> !tile.reg<64x64xi32>
      %v = tile.map %n, %flags : !i64_tile, !tile.reg<64x64xi32> -> !f32_tile {
      ^bb0(%a: i64, %l: i32):
        %f = arith.sitofp %a : i64 to f32
        %s = arith.mulf %f, %unit : f32
        %bad = arith.cmpi ne, %l, %zero : i32
        %r = arith.select %bad, %nan, %s : f32
        tile.yield %r : f32
      }
      scf.yield %v : !f32_tile
    } else {
      %v = tile.load %ws[%r0, %c] bounds [%rows, %cols] pad %pad {interleaved}
          : memref<?x?xf32>, f32 -> !f32_tile
      scf.yield %v : !f32_tile
    }
    scf.if %to_f32 {
      %y = scf.if %adds -> (!f32_tile) {
        %old = tile.load %dkv_f32[%r0, %c] bounds [%rows, %cols] pad %pad
            : !f32_rows, f32 -> !f32_tile
        %sum = tile.map %old, %x : !f32_tile, !f32_tile -> !f32_tile {
        ^bb0(%a: f32, %b: f32):
          %s = arith.addf %a, %b : f32
          tile.yield %s : f32
        }
        scf.yield %sum : !f32_tile
      } else {
        scf.yield %x : !f32_tile
      }
      tile.store %y, %dkv_f32[%r0, %c] bounds [%rows, %cols] : !f32_tile, !f32_rows
    } else {
      %y = scf.if %adds -> (!f32_tile) {
        %old = tile.load %dkv[%r0, %c] bounds [%rows, %cols] pad %pad_bf16
            : !bf16_rows, bf16 -> !bf16_tile
        %sum = tile.map %old, %x : !bf16_tile, !f32_tile -> !f32_tile {
        ^bb0(%a: bf16, %b: f32):
          %af = arith.extf %a : bf16 to f32
          %s = arith.addf %af, %b : f32
          tile.yield %s : f32
        }
        scf.yield %sum : !f32_tile
      } else {
        scf.yield %x : !f32_tile
      }
      %z = tile.map %y : !f32_tile -> !bf16_tile {
      ^bb0(%a: f32):
        %b = arith.truncf %a : f32 to bf16
        tile.yield %b : bf16
      }
      tile.store %z, %dkv[%r0, %c] bounds [%rows, %cols] : !bf16_tile, !bf16_rows
    }
  }
}
