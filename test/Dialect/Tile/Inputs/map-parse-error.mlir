!kv_block = !tile.smem<64x{dqk}xbf16>     // 64 gathered kv rows
!scores = !tile.reg<64x{hw}xf32>          // slots x warpgroup columns
!slot_words = !tile.reg<64x{hw}xi32>
!slots = !tile.reg<64xi32>
!col_vec = !tile.reg<{hw}xf32>
tile.kernel @sparse_mla_bwd(
    %q: memref<?x?xbf16>,          // [B * S * H, D + D_tail], row (token, head)
    %qk_scale: f32,                // sm_scale * log2(e)
    %lse_scale: f32,               // 1 for a base-2 lse, log2(e) for a natural one
    %sm_scale: f32) warpgroups(2)
    variants([{hw = 16, hp = 32, d = 512, dqk = 576}, {hw = 16, hp = 32, d = 512, dqk = 512},
              {hw = 32, hp = 64, d = 512, dqk = 576}, {hw = 32, hp = 64, d = 512, dqk = 512}]) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %one_i32 = arith.constant 1 : i32
  %dqk = memref.dim %q, %c1 : memref<?x?xbf16>
  %slot_row = arith.muli %local, %groups : index
  %krow = arith.addi %slot_row, %g : index
  %counted = arith.cmpi ugt, %num_counts, %c0 : index
  %h0 = arith.addi %h_group, %h_block : index
  %h_left = arith.subi %heads_per_group, %h_block : index
  %c_first = arith.muli %wg, %hw : index
    %rows = tile.map %keys_j : !slots -> !slots {
    }
    %gathered = tile.gather_rows %kv[%rows, %c0] into %sk
        : memref<?x?xbf16>, !slots, !kv_block
      %picked = tile.load %bits[%krow, %j] bounds [%bits_width] pad %none
          : memref<?x?xi32>, i32 -> !slots
      %p_t = tile.map %s_t, %lse_b, %valid, %picked_b, %token_b
          : !scores, !scores, !slot_words, !slot_words, !slot_words -> !scores {
      ^bb0(%x: f32, %l: f32, %row: i32, %pk: i32, %tk: i32):
      }
      %ds_t = tile.map %p_t, %dp_t, %delta_b : !scores, !scores, !scores -> !scores {
      }
  }
    %first = arith.cmpi eq, %l, %zero_i32 : i32
    %r = arith.truncf %x : f32 to bf16
  %num_computed = memref.dim %computed, %c0 : memref<?xi32>
  %num_computed_i32 = arith.index_cast %num_computed : index to i32
  %at = tile.map %lane : !tile.reg<1x128xi32> -> !tile.reg<1x128xi32> {
  ^bb0(%l: i32):
  ^bb0(%x: f32):
// Input of invalid.mlir's third RUN: a parse error inside a tile.map region
// after ops that use values not yet defined (a fuzzer's find, minimized:
// MLIR 22's generated parser freed the region while the parser still held
// its forward references). The comment is last: lines before it move the
// error and with it the crash.
