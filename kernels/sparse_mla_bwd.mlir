// The sparse-MLA backward (DESIGN.md section 2), main kernel.
//
// One CTA per (query token, kv group, block of up to 64 heads), two
// warpgroups. The keys are the M dimension of every GEMM (wgmma M is 64 per
// warpgroup; a token has few heads), so the kernel computes transposes:
//   for each block of 64 slots j of the token's topk indices
//   (blocks with no valid slot are skipped):
//     K     = kv rows gathered by index (invalid slots: zero rows, no read)
//     S^T   = K Q^T,  dP^T = V dO^T               (V = first D columns of K)
//     P^T   = exp2(S^T * scale * log2e - lse2)    (0 for invalid slots)
//     dS^T  = P^T (dP^T - Delta) * sm_scale
//     dQ^T += K^T dS^T                            (fp32 registers, all of topk)
//     dKV[rows] += dS^T Q + P^T dO                (red.global.add into fp32)
// Warpgroup w owns half of the heads: its S^T, dP^T, P^T, dS^T and dQ^T.
// dKV is computed 64 columns at a time, the chunks alternating between the
// warpgroups (tile-split-d). The gather of the next block overlaps the
// current one (tile-pipeline-loops).
//
// The kernel is generic over three shape parameters: {hw} heads per
// warpgroup (2 * hw per CTA), {d} = D and {dqk} = D + D_tail. tile-specialize
// compiles one kernel per entry of `variants` below.

!kv_block = !tile.smem<64x{dqk}xbf16>     // 64 gathered kv rows
!v_block = !tile.smem<64x{d}xbf16>        // their V part
!q_heads = !tile.smem<2x{hw}x{dqk}xbf16>  // Q of each warpgroup's heads
!do_heads = !tile.smem<2x{hw}x{d}xbf16>   // dO of each warpgroup's heads
!q_wg = !tile.smem<{hw}x{dqk}xbf16>
!do_wg = !tile.smem<{hw}x{d}xbf16>
!probs_both = !tile.smem<2x64x{hw}xbf16>  // P^T or dS^T of both warpgroups
!probs = !tile.smem<64x{hw}xbf16>         // P^T or dS^T of one warpgroup
!scores = !tile.reg<64x{hw}xf32>          // keys x warpgroup heads
!slot_mask = !tile.reg<64x{hw}xi32>
!head_vec = !tile.reg<{hw}xf32>
!dkv_rows = !tile.reg<64x{dqk}xf32>       // dKV of the gathered rows
!dkv_v_rows = !tile.reg<64x{d}xf32>       // their V part
!dq_acc = !tile.reg<{dqk}x{hw}xf32>       // dQ^T of the warpgroup's heads
!dq_out = !tile.reg<{dqk}x{hw}xbf16>

tile.kernel @sparse_mla_bwd(
    %q: memref<?x?x?xbf16>,        // [T, H, D + D_tail], T = B * S tokens
    %kv: memref<?x?xbf16>,         // [B * Skv * G, D + D_tail], row (b, key, g)
    %do: memref<?x?x?xbf16>,       // [T, H, D]
    %indices: memref<?x?x?xi32>,   // [T, G, topk]
    %lse: memref<?x?xf32>,         // [T, H]
    %delta: memref<?x?xf32>,       // [T, H], rowsum(O * dO) (preprocess)
    %dq: memref<?x?x?xbf16>,       // [T, H, D + D_tail]
    %dkv: memref<?x?xf32>,         // like kv, fp32, zeroed (postprocess -> bf16)
    %seq_len: index, %kv_len: index, %groups: index, %heads_per_group: index,
    %causal: i32,
    %qk_scale: f32,                // sm_scale * log2(e)
    %lse_scale: f32,               // 1 for a base-2 lse, log2(e) for a natural one
    %sm_scale: f32) warpgroups(2)
    variants([{hw = 16, d = 512, dqk = 576}, {hw = 16, d = 512, dqk = 512},
              {hw = 32, d = 512, dqk = 576}, {hw = 32, d = 512, dqk = 512}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %hw = tile.param "hw" : index  // heads per warpgroup
  %hp = arith.muli %hw, %c2 : index  // heads per CTA
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %none = arith.constant -1 : i32
  %zero_i32 = arith.constant 0 : i32
  %true = arith.constant true
  %dqk = memref.dim %q, %c2 : memref<?x?x?xbf16>
  %topk = memref.dim %indices, %c2 : memref<?x?x?xi32>

  // This CTA's token (b, s), kv group g and heads [h0, min(h0 + hp, h_end)).
  %t = tile.block_id x
  %by = tile.block_id y
  %head_blocks = arith.ceildivui %heads_per_group, %hp : index
  %g = arith.divui %by, %head_blocks : index
  %hb = arith.remui %by, %head_blocks : index
  %s = arith.remui %t, %seq_len : index
  %b = arith.divui %t, %seq_len : index
  %h_first = arith.muli %g, %heads_per_group : index
  %h_end = arith.addi %h_first, %heads_per_group : index
  %h_block = arith.muli %hb, %hp : index
  %h0 = arith.addi %h_first, %h_block : index
  %wg = tile.warpgroup_id
  %hw0 = arith.muli %wg, %hw : index
  %h_wg = arith.addi %h0, %hw0 : index

  // Q and dO of the CTA's heads, per warpgroup; heads at or past h_end are
  // zero rows.
  %sq = tile.alloc : !q_heads
  %sdo = tile.alloc : !do_heads
  %q0 = tile.slice %sq[%c0, %c0, %c0] : !q_heads to !q_wg
  %q1 = tile.slice %sq[%c1, %c0, %c0] : !q_heads to !q_wg
  %do0 = tile.slice %sdo[%c0, %c0, %c0] : !do_heads to !do_wg
  %do1 = tile.slice %sdo[%c1, %c0, %c0] : !do_heads to !do_wg
  %h1 = arith.addi %h0, %hw : index
  %tq0 = tile.async_copy %q[%t, %h0, %c0] bound %h_end into %q0
      : memref<?x?x?xbf16>, !q_wg
  %tq1 = tile.async_copy %q[%t, %h1, %c0] bound %h_end into %q1
      : memref<?x?x?xbf16>, !q_wg
  %tdo0 = tile.async_copy %do[%t, %h0, %c0] bound %h_end into %do0
      : memref<?x?x?xbf16>, !do_wg
  %tdo1 = tile.async_copy %do[%t, %h1, %c0] bound %h_end into %do1
      : memref<?x?x?xbf16>, !do_wg
  tile.wait %tq0, %tq1, %tdo0, %tdo1
  %q_w = tile.slice %sq[%wg, %c0, %c0] : !q_heads to !q_wg
  %do_w = tile.slice %sdo[%wg, %c0, %c0] : !do_heads to !do_wg

  // A slot is valid if 0 <= key < Skv and, when causal, key <= s; its kv row
  // is (b * Skv + key) * G + g. Invalid slots get row -1.
  %s_i32 = arith.index_cast %s : index to i32
  %kv_len_i32 = arith.index_cast %kv_len : index to i32
  %groups_i32 = arith.index_cast %groups : index to i32
  %g_i32 = arith.index_cast %g : index to i32
  %b_i32 = arith.index_cast %b : index to i32
  %batch_row = arith.muli %b_i32, %kv_len_i32 : i32
  %is_causal = arith.cmpi ne, %causal, %zero_i32 : i32

  %sk = tile.alloc : !kv_block
  %sp = tile.alloc : !probs_both
  %sds = tile.alloc : !probs_both
  %p_w = tile.slice %sp[%wg, %c0, %c0] : !probs_both to !probs
  %ds_w = tile.slice %sds[%wg, %c0, %c0] : !probs_both to !probs
  %p0 = tile.slice %sp[%c0, %c0, %c0] : !probs_both to !probs
  %p1 = tile.slice %sp[%c1, %c0, %c0] : !probs_both to !probs
  %ds0 = tile.slice %sds[%c0, %c0, %c0] : !probs_both to !probs
  %ds1 = tile.slice %sds[%c1, %c0, %c0] : !probs_both to !probs
  %no_scores = tile.splat %zero : !scores
  %no_dkv = tile.splat %zero : !dkv_rows
  %no_dkv_v = tile.splat %zero : !dkv_v_rows
  %dq_init = tile.splat %zero : !dq_acc

  %dq_t = tile.pipelined_for %j = %c0 to %topk step %c64 stages(2)
      iter_args(%dq_acc = %dq_init) -> (!dq_acc) {
    // Gather the block's kv rows.
    %keys = tile.load %indices[%t, %g, %j] bounds [%topk] pad %none
        : memref<?x?x?xi32>, i32 -> !tile.reg<64xi32>
    %rows = tile.map %keys : !tile.reg<64xi32> -> !tile.reg<64xi32> {
    ^bb0(%key: i32):
      %lo = arith.cmpi sge, %key, %zero_i32 : i32
      %hi = arith.cmpi slt, %key, %kv_len_i32 : i32
      %future = arith.cmpi sgt, %key, %s_i32 : i32
      %masked = arith.andi %is_causal, %future : i1
      %open = arith.xori %masked, %true : i1
      %in = arith.andi %lo, %hi : i1
      %ok = arith.andi %in, %open : i1
      %pos = arith.addi %batch_row, %key : i32
      %pos_g = arith.muli %pos, %groups_i32 : i32
      %row = arith.addi %pos_g, %g_i32 : i32
      %r = arith.select %ok, %row, %none : i32
      tile.yield %r : i32
    }
    %gathered = tile.gather_rows %kv[%rows, %c0] into %sk
        : memref<?x?xbf16>, !tile.reg<64xi32>, !kv_block
    tile.wait %gathered

    // A block of invalid slots only (causal padding: token s has s + 1 keys)
    // adds nothing: skip it.
    %slot_ok = tile.map %rows : !tile.reg<64xi32> -> !tile.reg<64xi1> {
    ^bb0(%row: i32):
      %ok = arith.cmpi sge, %row, %zero_i32 : i32
      tile.yield %ok : i1
    }
    %live = tile.any %slot_ok : !tile.reg<64xi1>
    %dq_next = scf.if %live -> (!dq_acc) {
      // Scores and their gradient, transposed: keys x this warpgroup's heads.
      %s_t = tile.gemm %sk, %q_w, %no_scores {transpose_b} : !kv_block, !q_wg, !scores
      %v = tile.slice %sk[%c0, %c0] : !kv_block to !v_block
      %dp_t = tile.gemm %v, %do_w, %no_scores {transpose_b} : !v_block, !do_wg, !scores
      %valid = tile.broadcast %rows along 1 : !tile.reg<64xi32> -> !slot_mask
      // lse in base 2 (padded heads: +inf, so P = 0) and Delta per head, read
      // again for each block: held across the loop, they would cost 16
      // registers a thread for all of it.
      %lse_raw = tile.load %lse[%t, %h_wg] bounds [%h_end] pad %inf
          : memref<?x?xf32>, f32 -> !head_vec
      %lse2 = tile.map %lse_raw : !head_vec -> !head_vec {
      ^bb0(%l: f32):
        %r = arith.mulf %l, %lse_scale : f32
        tile.yield %r : f32
      }
      %delta_w = tile.load %delta[%t, %h_wg] bounds [%h_end] pad %zero
          : memref<?x?xf32>, f32 -> !head_vec
      %lse_b = tile.broadcast %lse2 along 0 : !head_vec -> !scores
      %delta_b = tile.broadcast %delta_w along 0 : !head_vec -> !scores
      %p_t = tile.map %s_t, %lse_b, %valid : !scores, !scores, !slot_mask -> !scores {
      ^bb0(%x: f32, %l: f32, %row: i32):
        %xs = arith.mulf %x, %qk_scale : f32
        %e = arith.subf %xs, %l : f32
        %p = math.exp2 %e : f32
        %ok = arith.cmpi sge, %row, %zero_i32 : i32
        %r = arith.select %ok, %p, %zero : f32
        tile.yield %r : f32
      }
      %ds_t = tile.map %p_t, %dp_t, %delta_b : !scores, !scores, !scores -> !scores {
      ^bb0(%p: f32, %dp: f32, %d: f32):
        %diff = arith.subf %dp, %d : f32
        %pd = arith.mulf %p, %diff : f32
        %r = arith.mulf %pd, %sm_scale : f32
        tile.yield %r : f32
      }
      tile.write %p_t, %p_w : !scores, !probs
      tile.write %ds_t, %ds_w : !scores, !probs
      tile.barrier

      // dQ^T += K^T dS^T.
      %dq_new = tile.gemm %sk, %ds_w, %dq_acc {transpose_a} : !kv_block, !probs, !dq_acc
      scf.yield %dq_new : !dq_acc
    } else {
      scf.yield %dq_acc : !dq_acc
    }

    scf.if %live {
      // dKV rows += dS^T Q, and their V columns += P^T dO, summing over both
      // warpgroups' heads. tile-split-d cuts these into 64-column pieces that
      // the warpgroups take in turn, and adds the two before one scatter.
      %ds_q0 = tile.gemm %ds0, %q0, %no_dkv : !probs, !q_wg, !dkv_rows
      %ds_q = tile.gemm %ds1, %q1, %ds_q0 : !probs, !q_wg, !dkv_rows
      tile.scatter_add_rows %ds_q, %dkv[%rows, %c0]
          : !dkv_rows, memref<?x?xf32>, !tile.reg<64xi32>
      %p_do0 = tile.gemm %p0, %do0, %no_dkv_v : !probs, !do_wg, !dkv_v_rows
      %p_do = tile.gemm %p1, %do1, %p_do0 : !probs, !do_wg, !dkv_v_rows
      tile.scatter_add_rows %p_do, %dkv[%rows, %c0]
          : !dkv_v_rows, memref<?x?xf32>, !tile.reg<64xi32>
    }
    tile.yield %dq_next : !dq_acc
  }

  // dq, written once: the transpose of dQ^T, padded heads left out.
  %dq_bf16 = tile.map %dq_t : !dq_acc -> !dq_out {
  ^bb0(%x: f32):
    %r = arith.truncf %x : f32 to bf16
    tile.yield %r : bf16
  }
  tile.store %dq_bf16, %dq[%t, %h_wg, %c0] bounds [%h_end, %dqk] {transpose}
      : !dq_out, memref<?x?x?xbf16>
}
