// Attention sinks (DESIGN.md section 7): a per-head logit sink[h] (natural
// log) in the softmax denominator with no value row; the forward's lse is
// over the keys only. For row (token t, head h), in base 2
// (a = lse * to_base2, b = sink * log2 e):
//   lse'  = log2(2^a + 2^b)         the backward's lse: P = 2^(s - lse')
//   w     = 2^b / (2^a + 2^b)       the sink's probability
//   d_sink[h] = - sum_t w[t, h] * Delta[t, h]
// sink = -inf is no sink (lse' = lse, w = 0); +inf takes all the mass
// (lse' = +inf: every P and gradient is 0; w = 1).
//
// @sparse_mla_sink writes lse' in the caller's base and, per chunk of
// `chunk` tokens, the partial d_sink of 128 heads; @sparse_mla_sink_sum adds
// the partials. Both add in a fixed order: d_sink is the same bitwise on
// every run. A thread holds one head of 16 tokens (one lane per column), so
// the sum over tokens stays in the thread.
!rows = !tile.reg<16x128xf32, #tile.blocked<vector = 1, lanes = 128>>
!heads = !tile.reg<128xf32>

tile.kernel @sparse_mla_sink(%lse: memref<?x?xf32> [?, ?],                  // [tokens, H]
                             %delta: memref<?x?xf32> [%lse[0], %lse[1]],
                             %sink: memref<?xf32> [%lse[1]],
                             %lse_out: memref<?x?xf32> [%lse[0], %lse[1]],  // lse'
                             %partial: memref<?x?xf32> [%lse[0] ceildiv %chunk, %lse[1]],
                             %chunk: index,              // tokens per CTA, a multiple of 16
                             %to_base2: f32) warpgroups(1)
    grid([chunk : %lse[0] ceildiv %chunk], [heads : %lse[1] ceildiv 128]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %log2e = arith.constant 1.44269504 : f32
  %tokens = memref.dim %lse, %c0 : memref<?x?xf32>
  %h = memref.dim %lse, %c1 : memref<?x?xf32>
  %ci = tile.work_id "chunk"
  %hb = tile.work_id "heads"
  %t_first = arith.muli %ci, %chunk : index
  %t_after = arith.addi %t_first, %chunk : index
  %t_end = arith.minui %t_after, %tokens : index
  %h0 = arith.muli %hb, %c128 : index
  %sink_h = tile.load %sink[%h0] bounds [%h] pad %ninf : memref<?xf32>, f32 -> !heads
  %b = tile.broadcast %sink_h along 0 : !heads -> !rows
  %none = tile.splat %zero : !heads
  %sum = scf.for %t = %t_first to %t_end step %c16 iter_args(%acc = %none) -> (!heads) {
    %l = tile.load %lse[%t, %h0] bounds [%t_end, %h] pad %zero : memref<?x?xf32>, f32 -> !rows
    %d = tile.load %delta[%t, %h0] bounds [%t_end, %h] pad %zero : memref<?x?xf32>, f32 -> !rows
    %merged = tile.map %l, %b : !rows, !rows -> !rows {
    ^bb0(%lv: f32, %s: f32):
      %a2 = arith.mulf %lv, %to_base2 : f32
      %b2 = arith.mulf %s, %log2e : f32
      %m = arith.maximumf %a2, %b2 : f32
      %diff = arith.subf %a2, %b2 : f32
      %neg = arith.negf %diff : f32
      %far = arith.minimumf %diff, %neg : f32
      %e = math.exp2 %far : f32
      %e1 = arith.addf %e, %one : f32
      %lg = math.log2 %e1 : f32
      %r2 = arith.addf %m, %lg : f32
      // Both infinite alike: the sum is that infinity.
      %same_inf = arith.cmpf uno, %diff, %diff : f32
      %r = arith.select %same_inf, %m, %r2 : f32
      %back = arith.divf %r, %to_base2 : f32
      tile.yield %back : f32
    }
    tile.store %merged, %lse_out[%t, %h0] bounds [%t_end, %h] : !rows, memref<?x?xf32>
    %terms = tile.map %l, %b, %d : !rows, !rows, !rows -> !rows {
    ^bb0(%lv: f32, %s: f32, %dv: f32):
      %a2 = arith.mulf %lv, %to_base2 : f32
      %b2 = arith.mulf %s, %log2e : f32
      %diff = arith.subf %a2, %b2 : f32
      %e = math.exp2 %diff : f32
      %e1 = arith.addf %e, %one : f32
      %w = arith.divf %one, %e1 : f32
      %no_sink = arith.cmpf oeq, %s, %ninf : f32
      %w0 = arith.select %no_sink, %zero, %w : f32
      %term = arith.mulf %w0, %dv : f32
      tile.yield %term : f32
    }
    %part = tile.reduce add %terms along 0 : !rows -> !heads
    %next = tile.map %acc, %part : !heads, !heads -> !heads {
    ^bb0(%p: f32, %q: f32):
      %s = arith.addf %p, %q : f32
      tile.yield %s : f32
    }
    scf.yield %next : !heads
  }
  %neg_sum = tile.map %sum : !heads -> !heads {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    tile.yield %n : f32
  }
  tile.store %neg_sum, %partial[%ci, %h0] bounds [%h] : !heads, memref<?x?xf32>
}

// d_sink[h] = the sum over chunks of partial[., h], 128 heads a CTA.
tile.kernel @sparse_mla_sink_sum(%partial: memref<?x?xf32> [?, ?],
                                 %d_sink: memref<?xf32> [%partial[1]])
    warpgroups(1) grid([heads : %partial[1] ceildiv 128]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %chunks = memref.dim %partial, %c0 : memref<?x?xf32>
  %h = memref.dim %partial, %c1 : memref<?x?xf32>
  %hb = tile.work_id "heads"
  %h0 = arith.muli %hb, %c128 : index
  %none = tile.splat %zero : !heads
  %sum = scf.for %c = %c0 to %chunks step %c16 iter_args(%acc = %none) -> (!heads) {
    %p = tile.load %partial[%c, %h0] bounds [%chunks, %h] pad %zero
        : memref<?x?xf32>, f32 -> !rows
    %part = tile.reduce add %p along 0 : !rows -> !heads
    %next = tile.map %acc, %part : !heads, !heads -> !heads {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tile.yield %s : f32
    }
    scf.yield %next : !heads
  }
  tile.store %sum, %d_sink[%h0] bounds [%h] : !heads, memref<?xf32>
}
