// The sparse-MLA forward (DESIGN.md section 8).
//
// One CTA per (tile of T adjacent query tokens, kv group, block of up to 64
// (token, head) columns), two warpgroups. Its slots are those of the
// backward (kernels/sparse_mla_bwd.mlir): with T = 1 the token's topk
// indices, with T > 1 the union of its tokens' keys, each slot with the
// bits of the tokens that picked it; a key the tokens share is gathered
// once for all their columns, so few heads fill the tensor cores.
// The slots are the M dimension of the GEMMs (wgmma M is 64 per warpgroup;
// a tile has few columns), so the kernel computes transposes, with an
// online softmax down each column:
//   for each block of 64 slots j (blocks with no valid slot are skipped):
//     K     = kv rows gathered by key (invalid slots: zero rows, no read)
//     S^T   = K Q^T * sm_scale * log2e          (slots x columns; -inf where
//                                                 column c's token did not
//                                                 pick slot j)
//     m'    = max(m, max_j S^T)                  per column
//     P^T   = exp2(S^T - m'),   l = l * exp2(m - m') + sum_j P^T
//     O^T   = O^T * exp2(m - m') + V^T P^T       (V = first D columns of K;
//                                                 P^T rounded to bf16)
//   o = O^T^T / (l + exp2(sink2 - m)),  lse2 = m + log2 l   (keys only)
// A column with no valid key has l = 0: o = 0 and lse = +inf. o and lse
// are written once: no atomics, so they are the same bits on every call.
//
// The warpgroups split the work by role (tile.warp_specialize), so that
// warpgroup 0's scores of block j + 1 can run on the tensor cores while
// warpgroup 1 adds block j to O^T:
//   warpgroup 0 (scores): gathers K, computes S^T for all of the CTA's
//     columns (m64n64 products: K and Q are read once), the softmax, P^T
//     and the factors exp2(m - m'), hands them over in shared memory, and
//     accumulates the first 128 rows of O^T (a quarter: its registers also
//     hold the scores);
//   warpgroup 1 accumulates the other 384 rows of O^T.
// K, and P^T with the factors, go from warpgroup 0 to both on channels
// that the compiler inserts (tile-split-partitions) and gives as many
// slots as shared memory holds (tile-lower-channels). The shape
// parameters: {hw} columns per warpgroup in the prologue, {d} = D, {dqk} =
// D + D_tail, {hp} = 2 hw columns per CTA.

!kv_block = !tile.smem<64x{dqk}xbf16>     // 64 gathered kv rows
!v_block = !tile.smem<64x{d}xbf16>        // their V part
!q_cols = !tile.smem<{hp}x{dqk}xbf16>     // Q of the CTA's columns
!q_wg = !tile.smem<{hw}x{dqk}xbf16>       // a warpgroup's part of them
!probs = !tile.smem<64x{hp}xbf16>         // P^T of the CTA's columns
!col_table = !tile.smem<1x{hp}xf32>       // a value per CTA column
!scores = !tile.reg<64x{hp}xf32>          // slots x columns
!slot_words = !tile.reg<64x{hp}xi32>
!slots = !tile.reg<64xi32>
!col_idx = !tile.reg<{hw}xi32>
!cta_vec = !tile.reg<{hp}xf32>
!cta_idx = !tile.reg<{hp}xi32>
!o_acc = !tile.reg<{d}x{hp}xf32>          // O^T (each warpgroup holds its rows)
!o_out = !tile.reg<{d}x{hp}xbf16>
!rows = memref<?x?xbf16, strided<[?, 1]>> // rows of a matrix, or of a view of one

tile.kernel @sparse_mla_fwd(
    // Row (b, s, h) of q and o; row (b, key, g) of kv. Any of them may be a
    // view whose rows are further apart.
    %q: !rows [%batch * %seq_len * %groups * %heads_per_group, {dqk}],
    %kv: !rows [%batch * %kv_len * %groups, {dqk}],
    // The slots of each (tile, group) of the launch, as in the backward:
    // their keys, the tokens that picked them (none: all), how many are in
    // use (none: all).
    %keys: memref<?x?xi32> [%tiles * %groups, ?],
    %bits: memref<?x?xi32> [%tiles * %groups, %keys[1]] optional,
    %counts: memref<?x?xi32> [%tiles, ?] optional,
    // Each head's sink logit, in the softmax's denominator only (none: no
    // sink).
    %sink: memref<?xf32> [%groups * %heads_per_group] optional,
    %o: !rows [%batch * %seq_len * %groups * %heads_per_group, {d}],
    %lse: memref<?x?xf32> [%batch * %seq_len, %groups * %heads_per_group],
    %batch: index, %seq_len: index, %kv_len: index, %groups: index, %heads_per_group: index,
    %tile_tokens: index,           // T: 1, or T * heads_per_group <= hp
    %first_tile: index,            // the launch's tiles: [first_tile, first_tile + tiles)
    %tiles: index,
    %causal: i32,
    %q_offset: i32,                // position of token 0 of each batch row
    %qk_scale: f32,                // sm_scale * log2(e)
    %lse_scale: f32) warpgroups(2) // 1 for a base-2 lse, ln(2) for a natural one
    grid([b : %batch, tile : %seq_len ceildiv %tile_tokens] window(slot : %tiles from %first_tile),
         [g : %groups, hb : %heads_per_group ceildiv {hp}])
    derive([hp] = affine_map<()[hw] -> (hw * 2)>[hw])   // columns per CTA
    variants([{hw = 16, d = 512, dqk = 576}, {hw = 16, d = 512, dqk = 512},
              {hw = 32, d = 512, dqk = 576}, {hw = 32, d = 512, dqk = 512}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %hw = tile.param "hw" : index  // columns per warpgroup
  %hp = tile.param "hp" : index  // columns per CTA
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %minus_inf = arith.constant 0xFF800000 : f32
  %log2e = arith.constant 1.44269504 : f32
  %none = arith.constant -1 : i32
  %zero_i32 = arith.constant 0 : i32
  %one_i32 = arith.constant 1 : i32
  %width = memref.dim %keys, %c1 : memref<?x?xi32>
  %bits_width = memref.dim %bits, %c1 : memref<?x?xi32>

  // This CTA's tokens [s0, s0 + tn) of batch row b, kv group g, block hb of
  // cpt columns per token; its slots: row krow of `keys`, the first n in
  // use (a count clamped to [0, W]: with T = 1 the caller's topk_length).
  %b = tile.work_id "b"
  %in_row = tile.work_id "tile"
  %local = tile.work_id "slot"
  %g = tile.work_id "g"
  %hb = tile.work_id "hb"
  %cpt = arith.minui %heads_per_group, %hp : index
  %s0, %tn, %t0 = smla.token_tile %in_row of row %b tokens %tile_tokens per_row %seq_len
  %slot_row = arith.muli %local, %groups : index
  %krow = arith.addi %slot_row, %g : index
  %n = smla.slot_count %counts[%local, %g] width %width : memref<?x?xi32>

  // Column c of warpgroup w is number w * hw + c of the CTA: token t0 +
  // c' / cpt, head h0 + c' % cpt, and its row of q, o and lse (-1 for
  // padding). Q of the CTA's columns (padding: zero rows), each warpgroup
  // gathering its own.
  %heads = arith.muli %groups, %heads_per_group : index
  %h_block = arith.muli %hb, %hp : index
  %h_group = arith.muli %g, %heads_per_group : index
  %h0 = arith.addi %h_group, %h_block : index
  %h_left = arith.subi %heads_per_group, %h_block : index
  %wg = tile.warpgroup_id
  %c_first = arith.muli %wg, %hw : index
  %col_rows, %col_token = smla.columns from %c_first tokens %t0 count %tn heads %h0
      count %h_left per_token %cpt row_heads %heads : !col_idx
  %sq = tile.alloc : !q_cols
  %q_w = tile.slice %sq[%c_first, %c0] : !q_cols to !q_wg
  %tq = tile.gather_rows %q[%col_rows, %c0] into %q_w {per_warpgroup}
      : !rows, !col_idx, !q_wg
  tile.wait %tq

  // A slot's key k is valid if 0 <= k < Skv and, when causal, k <= the
  // position (q_offset + s) of the tile's last token (the bits say which
  // of its tokens see it); its kv row is (b * Skv + k) * G + g, -1 if invalid.
  %kv_len_i32 = arith.index_cast %kv_len : index to i32
  %groups_i32 = arith.index_cast %groups : index to i32
  %g_i32 = arith.index_cast %g : index to i32
  %b_i32 = arith.index_cast %b : index to i32
  %batch_row = arith.muli %b_i32, %kv_len_i32 : i32
  %s_end = arith.addi %s0, %tn : index
  %limit = smla.key_limit %kv_len before %s_end offset %q_offset causal %causal

  // A block's K, and its P^T with the factors: warpgroup 0 writes them and
  // both read; tile-split-partitions hands them over on channels. The
  // epilogue's 1 / denominator goes the same way.
  %sk = tile.alloc : !kv_block
  %sp = tile.alloc : !probs
  %s_alpha = tile.alloc : !col_table
  %s_inv = tile.alloc : !col_table
  %no_scores = tile.splat %zero : !scores
  tile.warp_specialize registers([256, 256]) stages(2) {
    %rows_c, %token = smla.columns from %c0 tokens %t0 count %tn heads %h0
        count %h_left per_token %cpt row_heads %heads : !cta_idx
    %o_init = tile.splat %zero : !o_acc
    %m_init = tile.splat %minus_inf : !cta_vec
    %o_t, %m, %l_parts = scf.for %j = %c0 to %n step %c64
        iter_args(%o_run = %o_init, %m_run = %m_init, %l_run = %no_scores)
        -> (!o_acc, !cta_vec, !scores) {
      %keys_j = tile.load %keys[%krow, %j] bounds [%n] pad %none
          : memref<?x?xi32>, i32 -> !slots
      %rows = smla.key_rows %keys_j below %limit first %batch_row groups %g_i32 of %groups_i32
          : !slots
      // A block of invalid slots only (causal padding) changes nothing.
      %slot_ok = tile.map %rows : !slots -> !tile.reg<64xi1> {
      ^bb0(%row: i32):
        %ok = arith.cmpi sge, %row, %zero_i32 : i32
        tile.yield %ok : i1
      }
      %live = tile.any %slot_ok : !tile.reg<64xi1>
      %o_next, %m_next, %l_next = scf.if %live -> (!o_acc, !cta_vec, !scores) {
        %gathered = tile.gather_rows %kv[%rows, %c0] into %sk {per_warpgroup, tile.partition = 0}
            : !rows, !slots, !kv_block
        %s_t = tile.gemm %sk, %sq, %no_scores {transpose_b, tile.partition = 0}
            : !kv_block, !q_cols, !scores
        // Scores in base 2; -inf where the slot is invalid or not the
        // column's token's.
        %picked = tile.load %bits[%krow, %j] bounds [%bits_width] pad %none
            : memref<?x?xi32>, i32 -> !slots
        %valid = tile.broadcast %rows along 1 : !slots -> !slot_words
        %picked_b = tile.broadcast %picked along 1 : !slots -> !slot_words
        %token_b = tile.broadcast %token along 0 : !cta_idx -> !slot_words
        %x = tile.map %s_t, %valid, %picked_b, %token_b
            : !scores, !slot_words, !slot_words, !slot_words -> !scores {
        ^bb0(%s: f32, %row: i32, %pk: i32, %tk: i32):
          %xs = arith.mulf %s, %qk_scale : f32
          %ok = arith.cmpi sge, %row, %zero_i32 : i32
          %by_token = arith.shrui %pk, %tk : i32
          %bit = arith.andi %by_token, %one_i32 : i32
          %mine = arith.cmpi ne, %bit, %zero_i32 : i32
          %use = arith.andi %ok, %mine : i1
          %r = arith.select %use, %xs, %minus_inf : f32
          tile.yield %r : f32
        }
        // The running maximum of each column, and the factor that moves what
        // was summed under the old one to the new (0 before any valid key;
        // a column still without one keeps 0 as its base).
        %block_max = tile.reduce max %x along 0 : !scores -> !cta_vec
        %m_new = tile.map %m_run, %block_max : !cta_vec, !cta_vec -> !cta_vec {
        ^bb0(%a: f32, %bm: f32):
          %r = arith.maximumf %a, %bm : f32
          tile.yield %r : f32
        }
        %base = tile.map %m_new : !cta_vec -> !cta_vec {
        ^bb0(%mn: f32):
          %none_yet = arith.cmpf oeq, %mn, %minus_inf : f32
          %r = arith.select %none_yet, %zero, %mn : f32
          tile.yield %r : f32
        }
        %alpha = tile.map %m_run, %base : !cta_vec, !cta_vec -> !cta_vec {
        ^bb0(%a: f32, %bs: f32):
          %e = arith.subf %a, %bs : f32
          %r = math.exp2 %e : f32
          tile.yield %r : f32
        }
        %base_b = tile.broadcast %base along 0 : !cta_vec -> !scores
        %alpha_s = tile.broadcast %alpha along 0 : !cta_vec -> !scores
        %p_t = tile.map %x, %base_b : !scores, !scores -> !scores {
        ^bb0(%xv: f32, %bs: f32):
          %e = arith.subf %xv, %bs : f32
          %r = math.exp2 %e : f32
          tile.yield %r : f32
        }
        // Each thread sums its own slots; the columns' sums are reduced
        // once, after the loop.
        %l_new = tile.map %l_run, %alpha_s, %p_t : !scores, !scores, !scores -> !scores {
        ^bb0(%lv: f32, %al: f32, %pv: f32):
          %scaled = arith.mulf %lv, %al : f32
          %r = arith.addf %scaled, %pv : f32
          tile.yield %r : f32
        }
        tile.write %p_t, %sp : !scores, !probs
        tile.write %alpha, %s_alpha : !cta_vec, !col_table

        // O^T = O^T * factor + V^T P^T: warpgroup 0 holds rows [0, D/2),
        // warpgroup 1 the others.
        %alpha_all = tile.read %s_alpha : !col_table -> !cta_vec
        %alpha_o = tile.broadcast %alpha_all along 0 : !cta_vec -> !o_acc
        %o_scaled = tile.map %o_run, %alpha_o : !o_acc, !o_acc -> !o_acc {
        ^bb0(%ov: f32, %al: f32):
          %r = arith.mulf %ov, %al : f32
          tile.yield %r : f32
        }
        %v = tile.slice %sk[%c0, %c0] : !kv_block to !v_block
        %o_new = tile.gemm %v, %sp, %o_scaled {transpose_a, tile.partition_rows = array<i64: 0, 128>}
            : !v_block, !probs, !o_acc
        scf.yield %o_new, %m_new, %l_new : !o_acc, !cta_vec, !scores
      } else {
        scf.yield %o_run, %m_run, %l_run : !o_acc, !cta_vec, !scores
      }
      scf.yield %o_next, %m_next, %l_next : !o_acc, !cta_vec, !scores
    }

    // o = O / (l + the sink's share), 0 for a column with no valid key; lse
    // over the keys only, +inf for such a column.
    %l = tile.reduce add %l_parts along 0 : !scores -> !cta_vec
    %heads_i32 = arith.index_cast %heads : index to i32
    %sink_len = memref.dim %sink, %c0 : memref<?xf32>
    %no_sink = arith.cmpi eq, %sink_len, %c0 : index
    %col_heads = tile.map %rows_c : !cta_idx -> !cta_idx {
    ^bb0(%row: i32):
      %h = arith.remsi %row, %heads_i32 : i32
      %pad = arith.cmpi slt, %row, %zero_i32 : i32
      %skip = arith.ori %pad, %no_sink : i1
      %r = arith.select %skip, %none, %h : i32
      tile.yield %r : i32
    }
    %sink_cols = tile.gather %sink[%col_heads] pad %minus_inf
        : memref<?xf32>, !cta_idx, f32 -> !cta_vec
    %inv = tile.map %l, %m, %sink_cols : !cta_vec, !cta_vec, !cta_vec -> !cta_vec {
    ^bb0(%lv: f32, %mv: f32, %sv: f32):
      %none_yet = arith.cmpf oeq, %mv, %minus_inf : f32
      %bs = arith.select %none_yet, %zero, %mv : f32
      %s2 = arith.mulf %sv, %log2e : f32
      %se = arith.subf %s2, %bs : f32
      %sink_part = math.exp2 %se : f32
      %den = arith.addf %lv, %sink_part : f32
      %inv_den = arith.divf %one, %den : f32
      %empty = arith.cmpf oeq, %lv, %zero : f32
      %r = arith.select %empty, %zero, %inv_den : f32
      tile.yield %r : f32
    }
    tile.write %inv, %s_inv : !cta_vec, !col_table
    %lse_cols = tile.map %l, %m : !cta_vec, !cta_vec -> !cta_vec {
    ^bb0(%lv: f32, %mv: f32):
      %lg = math.log2 %lv : f32
      %sum = arith.addf %mv, %lg : f32
      %scaled = arith.mulf %sum, %lse_scale : f32
      %empty = arith.cmpf oeq, %lv, %zero : f32
      %r = arith.select %empty, %inf, %scaled : f32
      tile.yield %r : f32
    }
    tile.scatter %lse_cols, %lse[%rows_c] : !cta_vec, memref<?x?xf32>, !cta_idx
    // Each warpgroup writes its rows of O^T, transposed: the columns of o.
    %inv_all = tile.read %s_inv : !col_table -> !cta_vec
    %inv_o = tile.broadcast %inv_all along 0 : !cta_vec -> !o_acc
    %o_bf16 = tile.map %o_t, %inv_o : !o_acc, !o_acc -> !o_out {
    ^bb0(%ov: f32, %iv: f32):
      %scaled = arith.mulf %ov, %iv : f32
      %r = arith.truncf %scaled : f32 to bf16
      tile.yield %r : bf16
    }
    tile.store_rows %o_bf16, %o[%rows_c, %c0] {transpose} : !o_out, !rows, !cta_idx
  }
}
