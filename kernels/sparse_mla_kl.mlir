// The indexer's KL target (DESIGN.md section 8): for each query token, kv
// group g and slot j of its topk,
//   kl_target[j] = (1 / heads per group) * sum over g's heads h of P[h, j],
//   P[h, j] = exp2(s[h, j] * sm_scale * log2e - L2[h]),
//   L2[h] = log2(2^lse2[h] + 2^sink2[h])   (the sink in P's denominator)
// from the forward's lse: a second pass over the scores. Invalid slots get
// 0. One CTA per (token, kv group, block of up to hp heads), two
// warpgroups, each with its own heads; per block of 64 slots:
//   K    = kv rows gathered by key (invalid slots: zero rows, no read)
//   S^T  = K Q^T,  P^T = exp2(S^T * scale - L2)  (0 where invalid)
//   p[j] = sum over the warpgroup's heads of P^T[j, .]   (a row sum)
// and the two warpgroups' sums, added in shared memory, are stored into the
// head block's row of `kl`; the caller adds the head blocks' rows (at most
// two, H / G = 128) and divides by the heads: no atomics, so the same bits
// on every call. Its cost is the forward's S^T GEMM and gather again,
// without P V; with each warpgroup reading all of K for its own heads, 0.6-0.8
// of a forward on an H100 (bench/NOTES.md).

!kv_block = !tile.smem<64x{dqk}xbf16>     // 64 gathered kv rows
!q_cols = !tile.smem<{hp}x{dqk}xbf16>     // Q of the CTA's heads
!q_wg = !tile.smem<{hw}x{dqk}xbf16>       // a warpgroup's part of them
!scores = !tile.reg<64x{hw}xf32>          // slots x the warpgroup's heads
!slots = !tile.reg<64xi32>
!slot_sums = !tile.reg<64xf32>
!sums = !tile.smem<2x64xf32>              // each warpgroup's sums of a block
!sums_wg = !tile.smem<1x64xf32>
!col_vec = !tile.reg<{hw}xf32>
!col_idx = !tile.reg<{hw}xi32>
!rows = memref<?x?xbf16, strided<[?, 1]>> // rows of a matrix, or of a view of one

tile.kernel @sparse_mla_kl(
    // Row (b, s, h) of q; row (b, key, g) of kv (views as the forward's).
    %q: !rows [%batch * %seq_len * %groups * %heads_per_group, {dqk}],
    %kv: !rows [%batch * %kv_len * %groups, {dqk}],
    // Each (token, group)'s topk keys, and how many are in use (G or 1
    // columns; none: all).
    %keys: memref<?x?xi32> [%batch * %seq_len * %groups, ?],
    %counts: memref<?x?xi32> [%batch * %seq_len, ?] optional,
    // The forward's lse (over the keys), each head's sink logit (none: no
    // sink), and the output: a row of slot sums per head block.
    %lse: memref<?x?xf32> [%batch * %seq_len, %groups * %heads_per_group],
    %sink: memref<?xf32> [%groups * %heads_per_group] optional,
    %kl: memref<?x?x?xf32> [%heads_per_group ceildiv {hp}, %batch * %seq_len * %groups, %keys[1]],
    %batch: index, %seq_len: index, %kv_len: index, %groups: index, %heads_per_group: index,
    %causal: i32,
    %q_offset: i32,                // position of token 0 of each batch row
    %qk_scale: f32,                // sm_scale * log2(e)
    %lse_scale: f32) warpgroups(2) // 1 for a base-2 lse, log2(e) for a natural one
    grid([b : %batch, s : %seq_len], [g : %groups, hb : %heads_per_group ceildiv {hp}])
    derive([hp] = affine_map<()[hw] -> (hw * 2)>[hw])   // heads per CTA
    variants([{hw = 16, d = 512, dqk = 576}, {hw = 16, d = 512, dqk = 512},
              {hw = 32, d = 512, dqk = 576}, {hw = 32, d = 512, dqk = 512}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %hw = tile.param "hw" : index
  %hp = tile.param "hp" : index
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %minus_inf = arith.constant 0xFF800000 : f32
  %log2e = arith.constant 1.44269504 : f32
  %none = arith.constant -1 : i32
  %zero_i32 = arith.constant 0 : i32
  %width = memref.dim %keys, %c1 : memref<?x?xi32>

  // Token s of batch row b, kv group g, heads [h0, h0 + hp) of the group;
  // its slots: row krow of `keys`, the first n in use.
  %b = tile.work_id "b"
  %s = tile.work_id "s"
  %g = tile.work_id "g"
  %hb = tile.work_id "hb"
  %row_start = arith.muli %b, %seq_len : index
  %t0 = arith.addi %row_start, %s : index
  %token_groups = arith.muli %t0, %groups : index
  %krow = arith.addi %token_groups, %g : index
  %n = smla.slot_count %counts[%t0, %g] width %width : memref<?x?xi32>

  // The warpgroup's heads: their q rows (-1 for padding) and L2.
  %heads = arith.muli %groups, %heads_per_group : index
  %h_block = arith.muli %hb, %hp : index
  %h_group = arith.muli %g, %heads_per_group : index
  %h0 = arith.addi %h_group, %h_block : index
  %h_left = arith.subi %heads_per_group, %h_block : index
  %cpt = arith.minui %heads_per_group, %hp : index
  %wg = tile.warpgroup_id
  %c_first = arith.muli %wg, %hw : index
  %col_rows, %col_token = smla.columns from %c_first tokens %t0 count %c1 heads %h0
      count %h_left per_token %cpt row_heads %heads : !col_idx
  %sq = tile.alloc : !q_cols
  %q_w = tile.slice %sq[%c_first, %c0] : !q_cols to !q_wg
  %tq = tile.gather_rows %q[%col_rows, %c0] into %q_w {per_warpgroup}
      : !rows, !col_idx, !q_wg
  tile.wait %tq
  %rows_c = tile.convert_layout %col_rows : !col_idx -> !col_idx
  %heads_i32 = arith.index_cast %heads : index to i32
  %sink_len = memref.dim %sink, %c0 : memref<?xf32>
  %no_sink = arith.cmpi eq, %sink_len, %c0 : index
  %col_heads = tile.map %rows_c : !col_idx -> !col_idx {
  ^bb0(%row: i32):
    %h = arith.remsi %row, %heads_i32 : i32
    %pad = arith.cmpi slt, %row, %zero_i32 : i32
    %skip = arith.ori %pad, %no_sink : i1
    %r = arith.select %skip, %none, %h : i32
    tile.yield %r : i32
  }
  // Padding heads: L2 = +inf, so P = 0.
  %lse_cols = tile.gather %lse[%rows_c] pad %inf : memref<?x?xf32>, !col_idx, f32 -> !col_vec
  %sink_cols = tile.gather %sink[%col_heads] pad %minus_inf
      : memref<?xf32>, !col_idx, f32 -> !col_vec
  %l2 = tile.map %lse_cols, %sink_cols : !col_vec, !col_vec -> !col_vec {
  ^bb0(%lv: f32, %sv: f32):
    %lse2 = arith.mulf %lv, %lse_scale : f32
    %sink2 = arith.mulf %sv, %log2e : f32
    %hi = arith.maximumf %lse2, %sink2 : f32
    %lo = arith.minimumf %lse2, %sink2 : f32
    %gap = arith.subf %lo, %hi : f32
    %e = math.exp2 %gap : f32
    %one = arith.constant 1.0 : f32
    %sum = arith.addf %one, %e : f32
    %lg = math.log2 %sum : f32
    %all = arith.addf %hi, %lg : f32
    // Both -inf (an empty row without a sink cannot occur: lse is +inf).
    %inf_hi = arith.cmpf oeq, %hi, %inf : f32
    %r = arith.select %inf_hi, %inf, %all : f32
    tile.yield %r : f32
  }
  %l2_b = tile.broadcast %l2 along 0 : !col_vec -> !scores

  // Keys valid as in the forward (0 <= k < Skv, causal: k <= q_offset + s).
  %kv_len_i32 = arith.index_cast %kv_len : index to i32
  %groups_i32 = arith.index_cast %groups : index to i32
  %g_i32 = arith.index_cast %g : index to i32
  %b_i32 = arith.index_cast %b : index to i32
  %batch_row = arith.muli %b_i32, %kv_len_i32 : i32
  %s_end = arith.addi %s, %c1 : index
  %limit = smla.key_limit %kv_len before %s_end offset %q_offset causal %causal

  %sk = tile.alloc : !kv_block
  %ssum = tile.alloc : !sums
  %sum_w = tile.slice %ssum[%wg, %c0] : !sums to !sums_wg
  %sum_0 = tile.slice %ssum[%c0, %c0] : !sums to !sums_wg
  %sum_1 = tile.slice %ssum[%c1, %c0] : !sums to !sums_wg
  %no_scores = tile.splat %zero : !scores
  %first_wg = arith.cmpi eq, %wg, %c0 : index
  tile.pipelined_for %j = %c0 to %n step %c64 stages(2) {
    %keys_j = tile.load %keys[%krow, %j] bounds [%n] pad %none
        : memref<?x?xi32>, i32 -> !slots
    %rows = smla.key_rows %keys_j below %limit first %batch_row groups %g_i32 of %groups_i32
        : !slots
    %gathered = tile.gather_rows %kv[%rows, %c0] into %sk : !rows, !slots, !kv_block
    tile.wait %gathered
    %s_t = tile.gemm %sk, %q_w, %no_scores {transpose_b} : !kv_block, !q_wg, !scores
    %valid = tile.broadcast %rows along 1 : !slots -> !tile.reg<64x{hw}xi32>
    %p_t = tile.map %s_t, %l2_b, %valid
        : !scores, !scores, !tile.reg<64x{hw}xi32> -> !scores {
    ^bb0(%x: f32, %l: f32, %row: i32):
      %xs = arith.mulf %x, %qk_scale : f32
      %e = arith.subf %xs, %l : f32
      %p = math.exp2 %e : f32
      %ok = arith.cmpi sge, %row, %zero_i32 : i32
      %r = arith.select %ok, %p, %zero : f32
      tile.yield %r : f32
    }
    // The slots' sums over the warpgroup's heads, then over both.
    %part = tile.reduce add %p_t along 1 : !scores -> !slot_sums
    tile.write %part, %sum_w : !slot_sums, !sums_wg
    tile.barrier
    scf.if %first_wg {
      %s0 = tile.read %sum_0 : !sums_wg -> !slot_sums
      %s1 = tile.read %sum_1 : !sums_wg -> !slot_sums
      %both = tile.map %s0, %s1 : !slot_sums, !slot_sums -> !slot_sums {
      ^bb0(%u: f32, %v: f32):
        %r = arith.addf %u, %v : f32
        tile.yield %r : f32
      }
      tile.store %both, %kl[%hb, %krow, %j] bounds [%n] : !slot_sums, memref<?x?x?xf32>
    }
  }
}
