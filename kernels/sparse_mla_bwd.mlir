// The sparse-MLA backward (DESIGN.md section 2), main kernel.
//
// One CTA per (tile of T adjacent query tokens, kv group, block of up to 64
// (token, head) columns), two warpgroups. It works over its tile's slots:
// with T = 1 the token's topk indices; with T > 1 the union of its tokens'
// keys (kernels/sparse_mla_union.mlir), each slot with the bits of the
// tokens that picked it, so a key the tokens share is gathered once and its
// dKV, summed over all their columns, scattered once.
// The slots are the M dimension of every GEMM (wgmma M is 64 per warpgroup;
// a tile has few columns), so the kernel computes transposes:
//   for each block of 64 slots j (blocks with no valid slot are skipped):
//     K     = kv rows gathered by key (invalid slots: zero rows, no read)
//     S^T   = K Q^T,  dP^T = V dO^T               (V = first D columns of K)
//     P^T   = exp2(S^T * scale * log2e - lse2)    where column c's token
//             picked slot j, else 0
//     dS^T  = P^T (dP^T - Delta) * sm_scale
//     dQ^T += K^T dS^T                            (fp32 registers, all slots)
//     dKV[rows] += dS^T Q + P^T dO                (red.global.add into fp32)
// The fp32 dKV workspace keeps its columns interleaved in groups of 16, in
// the order a thread holds the GEMM results, so each thread adds 16 bytes of
// its registers at once; the postprocess puts them back in order.
//
// The warpgroups split the work by role (tile.warp_specialize), so that the
// dKV reductions of block j overlap the gather and the scores of block j+1.
// The block loop is written once; `tile.partition` tags say which
// warpgroup runs an op (and what uses its results), and
// tile-split-partitions gives each its copy of the loop:
//   warpgroup 0 (scores): gathers K, computes S^T, dP^T, P^T, dS^T for all
//     columns, hands P^T and dS^T over in shared memory, accumulates the
//     first 256 rows of dQ^T, then computes and scatters dKV columns
//     [0, 128) while warpgroup 1 reduces the others;
//   warpgroup 1 (dKV): accumulates the other rows of dQ^T, then computes
//     the other dKV columns 64 at a time (tile-split-d) and scatters them.
// Warpgroup 1 sets the pace; giving warpgroup 0 two of its pieces measured
// faster than one or three (bench/NOTES.md).
// K, and P^T with dS^T, go from warpgroup 0 to both on two channels
// (one slot per computed block) that the compiler inserts and lowers
// (tile-split-partitions, tile-lower-channels).
// At long context the slots are in key order (the union, also per token)
// and warpgroup 1 keeps the CTAs that run together on one range of keys
// (smla.key_clock), so that the dKV rows they add into stay in L2.
//
// The kernel is generic over shape parameters: {hw} columns per
// warpgroup in the prologue, {d} = D, {dqk} = D + D_tail, and those
// derived from them (`derive` below): {hp} columns per CTA. Which
// warpgroup holds which rows of dQ^T and adds which columns of dKV is said
// once, on the GEMMs (`tile.partition_rows`, `tile.partition_cols`).
// tile-specialize compiles one kernel per entry of `variants`.

!kv_block = !tile.smem<64x{dqk}xbf16>     // 64 gathered kv rows
!v_block = !tile.smem<64x{d}xbf16>        // their V part
!q_cols = !tile.smem<{hp}x{dqk}xbf16>     // Q of the CTA's columns
!do_cols = !tile.smem<{hp}x{d}xbf16>      // dO of the CTA's columns
!q_wg = !tile.smem<{hw}x{dqk}xbf16>       // a warpgroup's part of them
!do_wg = !tile.smem<{hw}x{d}xbf16>
!probs = !tile.smem<64x{hp}xbf16>         // P^T or dS^T
!scores = !tile.reg<64x{hp}xf32>          // slots x columns
!slot_words = !tile.reg<64x{hp}xi32>
!slots = !tile.reg<64xi32>
!col_vec = !tile.reg<{hw}xf32>
!col_idx = !tile.reg<{hw}xi32>
!cta_vec = !tile.reg<{hp}xf32>
!cta_idx = !tile.reg<{hp}xi32>
!col_f32 = !tile.smem<2x{hp}xf32>         // per CTA column: lse2, Delta
!col_i32 = !tile.smem<2x{hp}xi32>         // per CTA column: q row, token
!col_f_wg = !tile.smem<1x{hw}xf32>        // a row of the table, for a warpgroup
!col_i_wg = !tile.smem<1x{hw}xi32>
!col_f_cta = !tile.smem<1x{hp}xf32>       // a row of the table, all columns
!col_i_cta = !tile.smem<1x{hp}xi32>
!dkv_qk = !tile.reg<64x{dqk}xf32>         // dKV of the gathered rows
!dkv_v = !tile.reg<64x{d}xf32>            // their V columns
!dq_acc = !tile.reg<{dqk}x{hp}xf32>       // dQ^T (each warpgroup holds its rows)
!dq_out = !tile.reg<{dqk}x{hp}xbf16>
!rows = memref<?x?xbf16, strided<[?, 1]>> // rows of a matrix, or of a view of one

tile.kernel @sparse_mla_bwd(
    // Row (b, s, h) of q, do and dq; row (b, key, g) of kv and dKV. q, kv,
    // do and dq may be views whose rows are further apart.
    %q: !rows [%batch * %seq_len * %groups * %heads_per_group, {dqk}],
    %kv: !rows [%batch * %kv_len * %groups, {dqk}],
    %do: !rows [%batch * %seq_len * %groups * %heads_per_group, {d}],
    // The slots of each (tile, group) of the launch: their keys (the
    // union's, or with T = 1 the indices), the tokens that picked them (bit
    // t: token t; none: all), and how many are in use (G or 1 columns;
    // none: all).
    %keys: memref<?x?xi32> [%tiles * %groups, ?],
    %bits: memref<?x?xi32> [%tiles * %groups, %keys[1]] optional,
    %counts: memref<?x?xi32> [%tiles, ?] optional,
    %lse: memref<?x?xf32> [%batch * %seq_len, %groups * %heads_per_group],
    %delta: memref<?x?xf32> [%batch * %seq_len, %groups * %heads_per_group],  // rowsum(O dO)
    %dq: !rows [%batch * %seq_len * %groups * %heads_per_group, {dqk}],
    // dKV, zeroed: fp32 with interleaved columns (the postprocess orders
    // them), or where {det} = 1 fixed point, with a flag per row that a
    // value did not convert.
    %dkv: memref<?x?xf32> [%batch * %kv_len * %groups, {dqk}] optional,
    %dkv_fixed: memref<?x?xi64> [%batch * %kv_len * %groups, {dqk}] optional,
    %dkv_lost: memref<?xi32> [%batch * %kv_len * %groups] optional,
    // Key ranges (long context), zeroed: a row per round of CTAs (at most
    // one a CTA), a column per range of keys; none: off.
    %clock: memref<?x?xi32> [%tiles * %groups * (%heads_per_group ceildiv {hp}),
                             %kv_len ceildiv %range_keys] optional,
    %batch: index, %seq_len: index, %kv_len: index, %groups: index, %heads_per_group: index,
    %tile_tokens: index,           // T: 1, or T * heads_per_group <= hp
    %first_tile: index,            // the launch's tiles: [first_tile, first_tile + tiles)
    %tiles: index,
    %causal: i32,
    %q_offset: i32,                // position of token 0 of each batch row
    %qk_scale: f32,                // sm_scale * log2(e)
    %lse_scale: f32,               // 1 for a base-2 lse, log2(e) for a natural one
    %sm_scale: f32,
    %range_keys: index,            // keys per range, a power of two (with a clock)
    %round_ctas: index) warpgroups(2)   // CTAs that run together
    // x: the launch's tiles of T tokens (batch row b, tile of the row); y:
    // kv group g, block hb of hp columns. A grid with the groups in z made
    // ptxas spill in the loop of the hp = 64 variants.
    grid([b : %batch, tile : %seq_len ceildiv %tile_tokens] window(slot : %tiles from %first_tile),
         [g : %groups, hb : %heads_per_group ceildiv {hp}])
    derive([hp] = affine_map<()[hw] -> (hw * 2)>[hw])   // columns per CTA
    // dKV's fixed point in units of 2^-fixed_point_bits; the CTAs that run
    // together spread over at most range_window + 1 ranges of keys.
    constants({fixed_point_bits = 40, range_window = 1})
    variants([{hw = 16, d = 512, dqk = 576, det = 0}, {hw = 16, d = 512, dqk = 512, det = 0},
              {hw = 32, d = 512, dqk = 576, det = 0}, {hw = 32, d = 512, dqk = 512, det = 0},
              {hw = 16, d = 512, dqk = 576, det = 1}, {hw = 16, d = 512, dqk = 512, det = 1},
              {hw = 32, d = 512, dqk = 576, det = 1}, {hw = 32, d = 512, dqk = 512, det = 1}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %hw = tile.param "hw" : index  // columns per warpgroup
  %hp = tile.param "hp" : index  // columns per CTA
  %det = tile.param "det" : i1   // dKV in fixed point: bitwise repeatable
  %fixed_bits = tile.param "fixed_point_bits" : i64
  %range_window = tile.param "range_window" : i32
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %none = arith.constant -1 : i32
  %zero_i32 = arith.constant 0 : i32
  %one_i32 = arith.constant 1 : i32
  %one_i64 = arith.constant 1 : i64
  %units = arith.shli %one_i64, %fixed_bits : i64
  %dkv_scale = arith.uitofp %units : i64 to f32   // fixed point units per 1.0 of dKV
  %dqk = memref.dim %q, %c1 : !rows
  %width = memref.dim %keys, %c1 : memref<?x?xi32>
  %bits_width = memref.dim %bits, %c1 : memref<?x?xi32>

  // This CTA's tokens [s0, s0 + tn) of batch row b, kv group g, and block hb
  // of cpt columns per token.
  %b = tile.work_id "b"
  %in_row = tile.work_id "tile"
  %local = tile.work_id "slot"
  %g = tile.work_id "g"
  %hb = tile.work_id "hb"
  %cpt = arith.minui %heads_per_group, %hp : index
  %s0, %tn, %t0 = smla.token_tile %in_row of row %b tokens %tile_tokens per_row %seq_len
  // Its slots: row krow of `keys`, the first n in use (a count clamped to
  // [0, W]: with T = 1 it is the caller's topk_length).
  %slot_row = arith.muli %local, %groups : index
  %krow = arith.addi %slot_row, %g : index
  %n = smla.slot_count %counts[%local, %g] width %width : memref<?x?xi32>

  // Column c of warpgroup w is number c' = w * hw + c of the CTA: token
  // t0 + c' / cpt, head h0 + c' % cpt. Its row of q, do, lse, delta and dq
  // (-1 for a padding column) and its token go to shared tables, with its
  // lse2 and Delta: the loop reads them back at addresses that hold no
  // registers across it.
  %heads = arith.muli %groups, %heads_per_group : index
  %h_block = arith.muli %hb, %hp : index
  %h_group = arith.muli %g, %heads_per_group : index
  %h0 = arith.addi %h_group, %h_block : index
  %h_left = arith.subi %heads_per_group, %h_block : index
  %wg = tile.warpgroup_id
  %c_first = arith.muli %wg, %hw : index
  %col_rows, %col_token = smla.columns from %c_first tokens %t0 count %tn heads %h0
      count %h_left per_token %cpt row_heads %heads : !col_idx
  // lse in base 2 (padding columns: +inf, so P = 0) and Delta.
  %lse_raw = tile.gather %lse[%col_rows] pad %inf : memref<?x?xf32>, !col_idx, f32 -> !col_vec
  %lse2 = tile.map %lse_raw : !col_vec -> !col_vec {
  ^bb0(%l: f32):
    %r = arith.mulf %l, %lse_scale : f32
    tile.yield %r : f32
  }
  %delta_cols = tile.gather %delta[%col_rows] pad %zero : memref<?x?xf32>, !col_idx, f32 -> !col_vec
  %col_f = tile.alloc : !col_f32
  %col_i = tile.alloc : !col_i32
  %lse_at = tile.slice %col_f[%c0, %c_first] : !col_f32 to !col_f_wg
  %delta_at = tile.slice %col_f[%c1, %c_first] : !col_f32 to !col_f_wg
  %rows_at = tile.slice %col_i[%c0, %c_first] : !col_i32 to !col_i_wg
  %token_at = tile.slice %col_i[%c1, %c_first] : !col_i32 to !col_i_wg
  tile.write %lse2, %lse_at : !col_vec, !col_f_wg
  tile.write %delta_cols, %delta_at : !col_vec, !col_f_wg
  tile.write %col_rows, %rows_at : !col_idx, !col_i_wg
  tile.write %col_token, %token_at : !col_idx, !col_i_wg

  // Q and dO of the CTA's columns (padding: zero rows); each warpgroup
  // gathers those of its own. The wait also makes the tables visible.
  %sq = tile.alloc : !q_cols
  %sdo = tile.alloc : !do_cols
  %q_w = tile.slice %sq[%c_first, %c0] : !q_cols to !q_wg
  %do_w = tile.slice %sdo[%c_first, %c0] : !do_cols to !do_wg
  %tq = tile.gather_rows %q[%col_rows, %c0] into %q_w {per_warpgroup}
      : !rows, !col_idx, !q_wg
  %tdo = tile.gather_rows %do[%col_rows, %c0] into %do_w {per_warpgroup}
      : !rows, !col_idx, !do_wg
  tile.wait %tq, %tdo
  %lse_all = tile.slice %col_f[%c0, %c0] : !col_f32 to !col_f_cta
  %delta_all = tile.slice %col_f[%c1, %c0] : !col_f32 to !col_f_cta
  %rows_all = tile.slice %col_i[%c0, %c0] : !col_i32 to !col_i_cta
  %token_all = tile.slice %col_i[%c1, %c0] : !col_i32 to !col_i_cta

  // A slot's key k is valid if 0 <= k < Skv and, when causal, k <= the
  // position (q_offset + s) of the tile's last token (the union left out
  // what is in the future of all of its tokens; the bits, what is in the
  // future of each); its kv row is (b * Skv + k) * G + g. Invalid slots
  // get row -1.
  %kv_len_i32 = arith.index_cast %kv_len : index to i32
  %groups_i32 = arith.index_cast %groups : index to i32
  %g_i32 = arith.index_cast %g : index to i32
  %b_i32 = arith.index_cast %b : index to i32
  %batch_row = arith.muli %b_i32, %kv_len_i32 : i32
  %s_end = arith.addi %s0, %tn : index
  %limit = smla.key_limit %kv_len before %s_end offset %q_offset causal %causal

  // A block's K, P^T and dS^T: warpgroup 0 writes them and both read;
  // tile-split-partitions hands them over on channels.
  %sk = tile.alloc : !kv_block
  %sp = tile.alloc : !probs
  %sds = tile.alloc : !probs
  %no_scores = tile.splat %zero : !scores

  // The block loop, written once: tile-split-partitions gives each
  // warpgroup its copy, with the ops tagged for it (and those using their
  // results) and what both need (the loop, the key map, the skip vote, the
  // reads of K, P^T and dS^T). Both walk the same blocks and skip the same
  // ones, so they take the channels' slots in step.
  tile.warp_specialize registers([256, 256]) {
    %dq_init = tile.splat %zero : !dq_acc
    %no_dkv = tile.splat %zero : !dkv_qk
    %no_dkv_v = tile.splat %zero : !dkv_v
    %dq_t = scf.for %j = %c0 to %n step %c64 iter_args(%dq_acc = %dq_init) -> (!dq_acc) {
      // Long contexts: the CTAs that run together stay on one range of
      // keys (their dKV rows stay in L2), on an advisory clock.
      smla.key_clock %clock, %keys[%krow] range %range_keys round %round_ctas window %range_window
          {tile.partition = 1} : memref<?x?xi32>, memref<?x?xi32>
      %keys_j = tile.load %keys[%krow, %j] bounds [%n] pad %none
          : memref<?x?xi32>, i32 -> !slots
      %rows = smla.key_rows %keys_j below %limit first %batch_row groups %g_i32 of %groups_i32
          : !slots
      // A block of invalid slots only (causal padding: token s has s + 1
      // keys) adds nothing: skip it.
      %slot_ok = tile.map %rows : !slots -> !tile.reg<64xi1> {
      ^bb0(%row: i32):
        %ok = arith.cmpi sge, %row, %zero_i32 : i32
        tile.yield %ok : i1
      }
      %live = tile.any %slot_ok : !tile.reg<64xi1>
      %dq_next = scf.if %live -> (!dq_acc) {
        // Warpgroup 0 gathers the block's kv rows.
        %gathered = tile.gather_rows %kv[%rows, %c0] into %sk {per_warpgroup, tile.partition = 0}
            : !rows, !slots, !kv_block
        // Which of the tile's tokens picked each slot (all where no bits
        // are given: T = 1), and the columns' lse2, Delta and token.
        %picked = tile.load %bits[%krow, %j] bounds [%bits_width] pad %none
            : memref<?x?xi32>, i32 -> !slots
        %v = tile.slice %sk[%c0, %c0] : !kv_block to !v_block

        // Warpgroup 0: scores and their gradient, transposed: slots x
        // columns. Both run on the tensor cores while P is computed from
        // the first.
        %s_run = tile.gemm %sk, %sq, %no_scores {transpose_b, async, tile.partition = 0}
            : !kv_block, !q_cols, !scores
        %dp_run = tile.gemm %v, %sdo, %no_scores {transpose_b, async, tile.partition = 0}
            : !v_block, !do_cols, !scores
        %s_t = tile.gemm_wait %s_run {pending = 1} : !scores
        %lse_c = tile.read %lse_all : !col_f_cta -> !cta_vec
        %token = tile.read %token_all : !col_i_cta -> !cta_idx
        %valid = tile.broadcast %rows along 1 : !slots -> !slot_words
        %picked_b = tile.broadcast %picked along 1 : !slots -> !slot_words
        %token_b = tile.broadcast %token along 0 : !cta_idx -> !slot_words
        %lse_b = tile.broadcast %lse_c along 0 : !cta_vec -> !scores
        %p_t = tile.map %s_t, %lse_b, %valid, %picked_b, %token_b
            : !scores, !scores, !slot_words, !slot_words, !slot_words -> !scores {
        ^bb0(%x: f32, %l: f32, %row: i32, %pk: i32, %tk: i32):
          %xs = arith.mulf %x, %qk_scale : f32
          %e = arith.subf %xs, %l : f32
          %p = math.exp2 %e : f32
          %ok = arith.cmpi sge, %row, %zero_i32 : i32
          %by_token = arith.shrui %pk, %tk : i32
          %bit = arith.andi %by_token, %one_i32 : i32
          %mine = arith.cmpi ne, %bit, %zero_i32 : i32
          %use = arith.andi %ok, %mine : i1
          %r = arith.select %use, %p, %zero : f32
          tile.yield %r : f32
        }
        %dp_t = tile.gemm_wait %dp_run {pending = 0} : !scores
        %delta_c = tile.read %delta_all : !col_f_cta -> !cta_vec
        %delta_b = tile.broadcast %delta_c along 0 : !cta_vec -> !scores
        %ds_t = tile.map %p_t, %dp_t, %delta_b : !scores, !scores, !scores -> !scores {
        ^bb0(%p: f32, %dp: f32, %d: f32):
          %diff = arith.subf %dp, %d : f32
          %pd = arith.mulf %p, %diff : f32
          %r = arith.mulf %pd, %sm_scale : f32
          tile.yield %r : f32
        }
        // P^T and dS^T to shared memory, for both warpgroups.
        tile.write %p_t, %sp : !scores, !probs
        tile.write %ds_t, %sds : !scores, !probs

        // dQ^T += K^T dS^T: warpgroup 0 holds rows [0, 256), warpgroup 1
        // the others.
        %dq_new = tile.gemm %sk, %sds, %dq_acc
            {transpose_a, tile.partition_rows = array<i64: 0, 256>}
            : !kv_block, !probs, !dq_acc
        // dKV rows += dS^T Q, and their V columns += P^T dO: warpgroup 0
        // adds columns [0, 128), warpgroup 1 the others, while warpgroup 0
        // computes the next block's scores. tile-split-d cuts each share
        // into 64-column pieces and adds the two products before one
        // scatter; where two pieces fit the registers beside dQ^T, the next
        // piece's products run while this one is scattered.
        %ds_q = tile.gemm %sds, %sq, %no_dkv {tile.partition_cols = array<i64: 0, 128>}
            : !probs, !q_cols, !dkv_qk
        scf.if %det {
          tile.scatter_add_rows %ds_q, %dkv_fixed[%rows, %c0] scale %dkv_scale
              overflow(%dkv_lost : memref<?xi32>) : !dkv_qk, memref<?x?xi64>, !slots
        } else {
          tile.scatter_add_rows %ds_q, %dkv[%rows, %c0]
              {interleaved} : !dkv_qk, memref<?x?xf32>, !slots
        }
        %p_do = tile.gemm %sp, %sdo, %no_dkv_v {tile.partition_cols = array<i64: 0, 128>}
            : !probs, !do_cols, !dkv_v
        scf.if %det {
          tile.scatter_add_rows %p_do, %dkv_fixed[%rows, %c0] scale %dkv_scale
              overflow(%dkv_lost : memref<?xi32>) : !dkv_v, memref<?x?xi64>, !slots
        } else {
          tile.scatter_add_rows %p_do, %dkv[%rows, %c0]
              {interleaved} : !dkv_v, memref<?x?xf32>, !slots
        }
        scf.yield %dq_new : !dq_acc
      } else {
        scf.yield %dq_acc : !dq_acc
      }
      scf.yield %dq_next : !dq_acc
    }

    // dq, written once per column: the transpose of dQ^T, padding left out
    // (each warpgroup its rows).
    %dq_rows = tile.read %rows_all : !col_i_cta -> !cta_idx
    %dq_bf16 = tile.map %dq_t : !dq_acc -> !dq_out {
    ^bb0(%x: f32):
      %r = arith.truncf %x : f32 to bf16
      tile.yield %r : bf16
    }
    tile.store_rows %dq_bf16, %dq[%dq_rows, %c0] {transpose}
        : !dq_out, !rows, !cta_idx
  }
}
