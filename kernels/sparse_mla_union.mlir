// Token tiles of the backward (DESIGN.md section 5): the union of the keys
// of T adjacent query tokens, so that the backward gathers and scatters
// each key once for all of them.
//
// One CTA per (tile of T tokens of one batch row, kv group). A key k is
// valid for token s if 0 <= k < Skv and, when causal, k <= s. The tile's
// entries are its keys that are valid for at least one of its tokens, in
// increasing order, each with a word whose bit t says that token t of the
// tile picked it; a token that picked a key n times adds n - 1 entries of
// its own bit. So the backward weights each (key, token) pair by its
// multiplicity and stays exactly the per-token backward.
//   1. mark: set bit k of a bitmap over the keys for every valid slot
//   2. rank: the exclusive prefix sum of the bitmap words' popcounts gives
//      the first entry of each word's keys, hence each key's entry
//   3. pick: OR the token's bit into its key's entry; the slot that opens
//      the entry writes the key, and a slot that finds its token's bit
//      already set (a repeat) takes a new entry after the union
//   4. write the union's token bits and the number of entries
//
// Generic over {nb} bitmap words (Skv <= 32 * nb) and {cap} entries
// (T * topk <= cap); the Python package picks the smallest variant.

!bitmap = !tile.smem<1x{nb}xi32>
!words = !tile.reg<1x{nb}xi32>
!entries = !tile.smem<1x{cap}xi32>
// 1024 slots of a token's row, a 4-byte load a thread: rows of topk
// indices are not 16-byte aligned in general.
!slots = !tile.reg<1x1024xi32, #tile.blocked<vector = 1, lanes = 128>>
!slot_smem = !tile.smem<1x1024xi32>
!ends = !tile.smem<1x4xi32>              // next free entry, union size
!one_row = !tile.reg<1x128xi32>

tile.kernel @sparse_mla_union(
    %indices: memref<?x?x?xi32>,   // [B * S, G, topk]
    %keys: memref<?x?xi32>,        // [tiles * G, W]: the entries' keys
    %bits: memref<?x?xi32>,        // [tiles * G, W]: the entries' token bits
    %counts: memref<?xi32>,        // [tiles * G]: the entries of each (tile, group)
    %seq_len: index, %kv_len: index,
    %tile_tokens: index,           // T <= 31
    %first_tile: index,            // tile of block 0 (the call may cover a range)
    %causal: i32) warpgroups(1)
    variants([{nb = 1024, cap = 8192}, {nb = 1024, cap = 16384},
              {nb = 8192, cap = 8192}, {nb = 8192, cap = 16384}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %none = arith.constant -1 : i32
  %c5 = arith.constant 5 : i32
  %c31 = arith.constant 31 : i32
  %cap = tile.param "cap" : index
  %nb = tile.param "nb" : i32
  %groups = memref.dim %indices, %c1 : memref<?x?x?xi32>
  %topk = memref.dim %indices, %c2 : memref<?x?x?xi32>
  %width = memref.dim %keys, %c1 : memref<?x?xi32>

  // This CTA's tokens [t0, t0 + tn) of batch row b, and its row of the output.
  %local = tile.block_id x
  %g = tile.block_id y
  %tile = arith.addi %local, %first_tile : index
  %tiles_per_row = arith.ceildivui %seq_len, %tile_tokens : index
  %b = arith.divui %tile, %tiles_per_row : index
  %in_row = arith.remui %tile, %tiles_per_row : index
  %s0 = arith.muli %in_row, %tile_tokens : index
  %left = arith.subi %seq_len, %s0 : index
  %tn = arith.minui %tile_tokens, %left : index
  %row_start = arith.muli %b, %seq_len : index
  %t0 = arith.addi %row_start, %s0 : index
  %out_row = arith.muli %local, %groups : index
  %row = arith.addi %out_row, %g : index
  %row_i32 = arith.index_cast %row : index to i32
  %width_i32 = arith.index_cast %width : index to i32
  %row_base = arith.muli %row_i32, %width_i32 : i32
  %kv_len_i32 = arith.index_cast %kv_len : index to i32
  %is_causal = arith.cmpi ne, %causal, %zero : i32

  %bitmap = tile.alloc : !bitmap
  %first = tile.alloc : !bitmap            // first entry of each word's keys
  %entry_bits = tile.alloc : !entries
  %ends = tile.alloc : !ends
  %no_words = tile.splat %zero : !words
  tile.write %no_words, %bitmap : !words, !bitmap
  %no_slots = tile.splat %zero : !slots
  scf.for %e = %c0 to %cap step %c1024 {
    %chunk = tile.slice %entry_bits[%c0, %e] : !entries to !slot_smem
    tile.write %no_slots, %chunk : !slots, !slot_smem
  }
  tile.barrier

  %pos = tile.iota along 1 : !slots
  %one_pos = tile.splat %one : !slots

  // 1. mark. Keys below `limit` are valid for token s: min(Skv, s + 1)
  // when causal, else Skv; `word` is -1 for a slot that is not valid.
  scf.for %t = %c0 to %tn step %c1 {
    %tok = arith.addi %t0, %t : index
    %s = arith.addi %s0, %t : index
    %s_i32 = arith.index_cast %s : index to i32
    %s_next = arith.addi %s_i32, %one : i32
    %upto_s = arith.minsi %s_next, %kv_len_i32 : i32
    %limit = arith.select %is_causal, %upto_s, %kv_len_i32 : i32
    scf.for %j = %c0 to %topk step %c1024 {
      %k = tile.load %indices[%tok, %g, %j] bounds [%groups, %topk] pad %none
          : memref<?x?x?xi32>, i32 -> !slots
      %word = tile.map %k : !slots -> !slots {
      ^bb0(%key: i32):
        %lo = arith.cmpi sge, %key, %zero : i32
        %hi = arith.cmpi slt, %key, %limit : i32
        %ok = arith.andi %lo, %hi : i1
        %w = arith.shrsi %key, %c5 : i32
        %r = arith.select %ok, %w, %none : i32
        tile.yield %r : i32
      }
      %bit = tile.map %k : !slots -> !slots {
      ^bb0(%key: i32):
        %i = arith.andi %key, %c31 : i32
        %r = arith.shli %one, %i : i32
        tile.yield %r : i32
      }
      %unused = tile.atomic_rmw or %bit, %bitmap[%word] : !slots, !bitmap, !slots
    }
  }
  tile.barrier

  // 2. rank; the union's size goes to both ends (the last word's sum).
  %marks = tile.read %bitmap : !bitmap -> !words
  %popc = tile.map %marks : !words -> !words {
  ^bb0(%m: i32):
    %r = math.ctpop %m : i32
    tile.yield %r : i32
  }
  %upto = tile.scan add %popc : !words
  %before = tile.map %upto, %popc : !words, !words -> !words {
  ^bb0(%u: i32, %p: i32):
    %r = arith.subi %u, %p : i32
    tile.yield %r : i32
  }
  tile.write %before, %first : !words, !bitmap
  %word_pos = tile.iota along 1 : !words
  %nb_last = arith.subi %nb, %one : i32
  %size_at = tile.map %word_pos : !words -> !words {
  ^bb0(%w: i32):
    %last = arith.cmpi eq, %w, %nb_last : i32
    %r = arith.select %last, %zero, %none : i32
    tile.yield %r : i32
  }
  tile.scatter %upto, %ends[%size_at] : !words, !ends, !words
  %size_at1 = tile.map %size_at : !words -> !words {
  ^bb0(%w: i32):
    %ok = arith.cmpi sge, %w, %zero : i32
    %r = arith.select %ok, %one, %none : i32
    tile.yield %r : i32
  }
  tile.scatter %upto, %ends[%size_at1] : !words, !ends, !words
  tile.barrier

  // 3. pick
  scf.for %t = %c0 to %tn step %c1 {
    %tok = arith.addi %t0, %t : index
    %s = arith.addi %s0, %t : index
    %s_i32 = arith.index_cast %s : index to i32
    %s_next = arith.addi %s_i32, %one : i32
    %upto_s = arith.minsi %s_next, %kv_len_i32 : i32
    %limit = arith.select %is_causal, %upto_s, %kv_len_i32 : i32
    %t_i32 = arith.index_cast %t : index to i32
    %tbit = arith.shli %one, %t_i32 : i32
    %token_bit = tile.splat %tbit : !slots
    scf.for %j = %c0 to %topk step %c1024 {
      %k = tile.load %indices[%tok, %g, %j] bounds [%groups, %topk] pad %none
          : memref<?x?x?xi32>, i32 -> !slots
      %word = tile.map %k : !slots -> !slots {
      ^bb0(%key: i32):
        %lo = arith.cmpi sge, %key, %zero : i32
        %hi = arith.cmpi slt, %key, %limit : i32
        %ok = arith.andi %lo, %hi : i1
        %w = arith.shrsi %key, %c5 : i32
        %r = arith.select %ok, %w, %none : i32
        tile.yield %r : i32
      }
      %marked = tile.gather %bitmap[%word] pad %zero : !bitmap, !slots, i32 -> !slots
      %base = tile.gather %first[%word] pad %zero : !bitmap, !slots, i32 -> !slots
      // Entry: the word's first, plus the keys of the word below k.
      %entry = tile.map %k, %word, %marked, %base : !slots, !slots, !slots, !slots -> !slots {
      ^bb0(%key: i32, %w: i32, %m: i32, %f: i32):
        %i = arith.andi %key, %c31 : i32
        %bit = arith.shli %one, %i : i32
        %below = arith.subi %bit, %one : i32
        %lower = arith.andi %m, %below : i32
        %n = math.ctpop %lower : i32
        %at = arith.addi %f, %n : i32
        %ok = arith.cmpi sge, %w, %zero : i32
        %r = arith.select %ok, %at, %none : i32
        tile.yield %r : i32
      }
      %old = tile.atomic_rmw or %token_bit, %entry_bits[%entry] : !slots, !entries, !slots
      // The slot that opens an entry writes its key.
      %key_at = tile.map %entry, %old : !slots, !slots -> !slots {
      ^bb0(%e: i32, %o: i32):
        %ok = arith.cmpi sge, %e, %zero : i32
        %fresh = arith.cmpi eq, %o, %zero : i32
        %opens = arith.andi %ok, %fresh : i1
        %at = arith.addi %row_base, %e : i32
        %r = arith.select %opens, %at, %none : i32
        tile.yield %r : i32
      }
      tile.scatter %k, %keys[%key_at] : !slots, memref<?x?xi32>, !slots
      // A repeat takes the next free entry, with only its token's bit.
      %repeat_at = tile.map %entry, %old : !slots, !slots -> !slots {
      ^bb0(%e: i32, %o: i32):
        %ok = arith.cmpi sge, %e, %zero : i32
        %mine = arith.andi %o, %tbit : i32
        %seen = arith.cmpi ne, %mine, %zero : i32
        %rep = arith.andi %ok, %seen : i1
        %r = arith.select %rep, %zero, %none : i32
        tile.yield %r : i32
      }
      %ones = tile.splat %one : !slots
      %next = tile.atomic_rmw add %ones, %ends[%repeat_at] : !slots, !ends, !slots
      %extra_at = tile.map %repeat_at, %next : !slots, !slots -> !slots {
      ^bb0(%r0: i32, %n: i32):
        %ok = arith.cmpi sge, %r0, %zero : i32
        %at = arith.addi %row_base, %n : i32
        %r = arith.select %ok, %at, %none : i32
        tile.yield %r : i32
      }
      tile.scatter %k, %keys[%extra_at] : !slots, memref<?x?xi32>, !slots
      tile.scatter %token_bit, %bits[%extra_at] : !slots, memref<?x?xi32>, !slots
    }
  }
  tile.barrier

  // 4. write the union's token bits, then the number of entries.
  %size = tile.gather %ends[%one_pos] : !ends, !slots -> !slots
  scf.for %e = %c0 to %cap step %c1024 {
    %chunk = tile.slice %entry_bits[%c0, %e] : !entries to !slot_smem
    %v = tile.read %chunk : !slot_smem -> !slots
    %e_i32 = arith.index_cast %e : index to i32
    %at = tile.map %pos, %size : !slots, !slots -> !slots {
    ^bb0(%p: i32, %n: i32):
      %i = arith.addi %p, %e_i32 : i32
      %ok = arith.cmpi slt, %i, %n : i32
      %a = arith.addi %row_base, %i : i32
      %r = arith.select %ok, %a, %none : i32
      tile.yield %r : i32
    }
    tile.scatter %v, %bits[%at] : !slots, memref<?x?xi32>, !slots
  }
  %lane = tile.iota along 1 : !one_row
  %zeros = tile.splat %zero : !one_row
  %count = tile.gather %ends[%zeros] : !ends, !one_row -> !one_row
  %count_at = tile.map %lane : !one_row -> !one_row {
  ^bb0(%l: i32):
    %first_lane = arith.cmpi eq, %l, %zero : i32
    %r = arith.select %first_lane, %row_i32, %none : i32
    tile.yield %r : i32
  }
  tile.scatter %count, %counts[%count_at] : !one_row, memref<?xi32>, !one_row
}
