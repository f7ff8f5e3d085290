// Token tiles of the backward (DESIGN.md section 5): the union of the keys
// of T adjacent query tokens, so that the backward gathers and scatters
// each key once for all of them.
//
// One CTA per (tile of T tokens of one batch row, kv group). Token s reads
// the first len(s) = clamp(topk_length[s], 0, topk) slots of its row (all
// topk without lengths); a key k there is valid if 0 <= k < Skv and, when
// causal, k <= q_offset + s (the token's position). The tile's entries
// are its keys that are valid for at least one of its tokens, in
// increasing order, each with a word whose bit t says that token t of the
// tile picked it; a token that picked a key n times adds n - 1 entries of
// its own bit after them. So the backward weights each (key, token) pair
// by its multiplicity and stays exactly the per-token backward. Every
// entry's place depends on the indices alone, never on the order of the
// atomics: the backward's dq sums in that order, bitwise repeatably.
//   1. mark: set bit k of a bitmap over the keys for every valid slot
//   2. rank: the exclusive prefix sum of the bitmap words' popcounts gives
//      the first entry of each word's keys, hence each key's entry
//   3. pick, token by token: the first slot of a key in the token's row
//      (the largest tag in an atomic max) ORs the token's bit into the
//      key's entry and writes the key; each later slot of it (a repeat)
//      takes the next entry after the union, in slot order (a prefix sum)
//   4. write the union's token bits and the number of entries
//
// Generic over {nb} bitmap words (Skv <= 32 * nb) and {cap} entries
// (T * topk <= cap); the Python package picks the smallest variant.

!bitmap = !tile.smem<1x{nb}xi32>
!entries = !tile.smem<1x{cap}xi32>
// 1024 slots of a token's row, a 4-byte load a thread: rows of topk
// indices are not 16-byte aligned in general.
!slots = !tile.reg<1x1024xi32, #tile.blocked<vector = 1, lanes = 128>>
!slot_smem = !tile.smem<1x1024xi32>
!ends = !tile.smem<1x4xi32>              // next free entry, union size
!one_row = !tile.reg<1x128xi32>

tile.kernel @sparse_mla_union(
    %indices: memref<?x?x?xi32>,   // [B * S, G, topk]
    %lengths: memref<?x?xi32>,     // [B * S, G or 1] live slots per row, or [.., 0]: all
    %keys: memref<?x?xi32>,        // [tiles * G, W]: the entries' keys
    %bits: memref<?x?xi32>,        // [tiles * G, W]: the entries' token bits
    %counts: memref<?xi32>,        // [tiles * G]: the entries of each (tile, group)
    %seq_len: index, %kv_len: index,
    %tile_tokens: index,           // T <= 31
    %first_tile: index,            // tile of block 0 (the call may cover a range)
    %causal: i32,
    %q_offset: i32) warpgroups(1)   // position of token 0 of each batch row
    variants([{nb = 1024, cap = 8192}, {nb = 1024, cap = 16384},
              {nb = 8192, cap = 8192}, {nb = 8192, cap = 16384}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %none = arith.constant -1 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %c26 = arith.constant 26 : i32
  %c31 = arith.constant 31 : i32
  %c1023 = arith.constant 1023 : i32
  %tag_low = arith.constant 67108863 : i32   // 2^26 - 1
  %cap = tile.param "cap" : index
  %nb = tile.param "nb" : index
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
  %best = tile.alloc : !entries            // largest tag of each entry's slots
  %ends = tile.alloc : !ends
  %no_slots = tile.splat %zero : !slots
  scf.for %w = %c0 to %nb step %c1024 {
    %chunk = tile.slice %bitmap[%c0, %w] : !bitmap to !slot_smem
    tile.write %no_slots, %chunk : !slots, !slot_smem
  }
  scf.for %e = %c0 to %cap step %c1024 {
    %chunk = tile.slice %entry_bits[%c0, %e] : !entries to !slot_smem
    tile.write %no_slots, %chunk : !slots, !slot_smem
    %best_chunk = tile.slice %best[%c0, %e] : !entries to !slot_smem
    tile.write %no_slots, %best_chunk : !slots, !slot_smem
  }
  %pos = tile.iota along 1 : !slots
  %one_pos = tile.splat %one : !slots
  %ends_at = tile.map %pos : !slots -> !slots {
  ^bb0(%p: i32):
    %in = arith.cmpi slt, %p, %c4 : i32
    %r = arith.select %in, %p, %none : i32
    tile.yield %r : i32
  }
  tile.scatter %no_slots, %ends[%ends_at] : !slots, !ends, !slots
  tile.barrier
  %groups_with_lengths = memref.dim %lengths, %c1 : memref<?x?xi32>
  %has_lengths = arith.cmpi ugt, %groups_with_lengths, %c0 : index
  %length_group = arith.subi %groups_with_lengths, %c1 : index
  %lg = arith.minui %g, %length_group : index

  // 1. mark. Token s reads its first `len` slots; keys below `limit` are
  // valid for it: min(Skv, q_offset + s + 1) when causal, else Skv;
  // `word` is -1 for a slot that is not valid.
  scf.for %t = %c0 to %tn step %c1 {
    %tok = arith.addi %t0, %t : index
    %s = arith.addi %s0, %t : index
    %s_i32 = arith.index_cast %s : index to i32
    %at = arith.addi %s_i32, %q_offset : i32
    %s_next = arith.addi %at, %one : i32
    %upto_s = arith.minsi %s_next, %kv_len_i32 : i32
    %limit = arith.select %is_causal, %upto_s, %kv_len_i32 : i32
    %len = scf.if %has_lengths -> (index) {
      %l = memref.load %lengths[%tok, %lg] : memref<?x?xi32>
      %l_pos = arith.maxsi %l, %zero : i32
      %l_idx = arith.index_cast %l_pos : i32 to index
      %l_in = arith.minui %l_idx, %topk : index
      scf.yield %l_in : index
    } else {
      scf.yield %topk : index
    }
    scf.for %j = %c0 to %len step %c1024 {
      %k = tile.load %indices[%tok, %g, %j] bounds [%groups, %len] pad %none
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
  // 2. rank, 1024 words at a time: the exclusive prefix sum of the words'
  // popcounts, plus the keys of the words before the chunk (ends[1]), is
  // the first entry of each word's keys. The last sum is the union's size,
  // where the repeats start (ends[0]).
  %last_pos = tile.map %pos : !slots -> !slots {
  ^bb0(%p: i32):
    %last = arith.cmpi eq, %p, %c1023 : i32
    %r = arith.select %last, %zero, %none : i32
    tile.yield %r : i32
  }
  %last_pos1 = tile.map %last_pos : !slots -> !slots {
  ^bb0(%p: i32):
    %ok = arith.cmpi sge, %p, %zero : i32
    %r = arith.select %ok, %one, %none : i32
    tile.yield %r : i32
  }
  scf.for %w = %c0 to %nb step %c1024 {
    %keys_before = tile.gather %ends[%one_pos] : !ends, !slots -> !slots
    %marks_at = tile.slice %bitmap[%c0, %w] : !bitmap to !slot_smem
    %marks = tile.read %marks_at : !slot_smem -> !slots
    %popc = tile.map %marks : !slots -> !slots {
    ^bb0(%m: i32):
      %r = math.ctpop %m : i32
      tile.yield %r : i32
    }
    %upto = tile.scan add %popc : !slots
    %before = tile.map %upto, %popc, %keys_before : !slots, !slots, !slots -> !slots {
    ^bb0(%u: i32, %p: i32, %k0: i32):
      %in_chunk = arith.subi %u, %p : i32
      %r = arith.addi %k0, %in_chunk : i32
      tile.yield %r : i32
    }
    %first_at = tile.slice %first[%c0, %w] : !bitmap to !slot_smem
    tile.write %before, %first_at : !slots, !slot_smem
    %through = tile.map %upto, %keys_before : !slots, !slots -> !slots {
    ^bb0(%u: i32, %k0: i32):
      %r = arith.addi %k0, %u : i32
      tile.yield %r : i32
    }
    tile.barrier                           // all have read ends[1]
    tile.scatter %through, %ends[%last_pos] : !slots, !ends, !slots
    tile.scatter %through, %ends[%last_pos1] : !slots, !ends, !slots
    tile.barrier
  }

  // 3. pick, token by token. A slot's tag is larger for an earlier slot
  // of the row and for any slot of a later token: t * 2^26 + 2^26 - 1 - j
  // (topk < 2^26, T <= 31), so the largest tag of an entry in token t's
  // pass is that of t's first slot of the key, with no reset in between.
  %zero_pos = tile.splat %zero : !slots
  scf.for %t = %c0 to %tn step %c1 {
    %tok = arith.addi %t0, %t : index
    %s = arith.addi %s0, %t : index
    %s_i32 = arith.index_cast %s : index to i32
    %at = arith.addi %s_i32, %q_offset : i32
    %s_next = arith.addi %at, %one : i32
    %upto_s = arith.minsi %s_next, %kv_len_i32 : i32
    %limit = arith.select %is_causal, %upto_s, %kv_len_i32 : i32
    %len = scf.if %has_lengths -> (index) {
      %l = memref.load %lengths[%tok, %lg] : memref<?x?xi32>
      %l_pos = arith.maxsi %l, %zero : i32
      %l_idx = arith.index_cast %l_pos : i32 to index
      %l_in = arith.minui %l_idx, %topk : index
      scf.yield %l_in : index
    } else {
      scf.yield %topk : index
    }
    %t_i32 = arith.index_cast %t : index to i32
    %tbit = arith.shli %one, %t_i32 : i32
    %token_bit = tile.splat %tbit : !slots
    %tag_high = arith.shli %t_i32, %c26 : i32
    %tag0 = arith.addi %tag_high, %tag_low : i32
    // 3a. Each slot offers its tag to its key's entry; 3b. the slot whose
    // tag won opens the entry for the token, the others are repeats.
    scf.for %pass = %c0 to %c2 step %c1 {
      %opening = arith.cmpi eq, %pass, %c1 : index
      scf.for %j = %c0 to %len step %c1024 {
        %k = tile.load %indices[%tok, %g, %j] bounds [%groups, %len] pad %none
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
          %at_e = arith.addi %f, %n : i32
          %ok = arith.cmpi sge, %w, %zero : i32
          %r = arith.select %ok, %at_e, %none : i32
          tile.yield %r : i32
        }
        %j_i32 = arith.index_cast %j : index to i32
        %tag_j = arith.subi %tag0, %j_i32 : i32
        %tag = tile.map %pos : !slots -> !slots {
        ^bb0(%p: i32):
          %r = arith.subi %tag_j, %p : i32
          tile.yield %r : i32
        }
        scf.if %opening {
          %won = tile.gather %best[%entry] pad %zero : !entries, !slots, i32 -> !slots
          %open_at = tile.map %entry, %won, %tag : !slots, !slots, !slots -> !slots {
          ^bb0(%e: i32, %w: i32, %tg: i32):
            %first_slot = arith.cmpi eq, %w, %tg : i32
            %r = arith.select %first_slot, %e, %none : i32
            tile.yield %r : i32
          }
          %old = tile.atomic_rmw or %token_bit, %entry_bits[%open_at] : !slots, !entries, !slots
          // The first token to open an entry writes its key.
          %key_at = tile.map %open_at, %old : !slots, !slots -> !slots {
          ^bb0(%e: i32, %o: i32):
            %ok = arith.cmpi sge, %e, %zero : i32
            %fresh = arith.cmpi eq, %o, %zero : i32
            %opens = arith.andi %ok, %fresh : i1
            %a = arith.addi %row_base, %e : i32
            %r = arith.select %opens, %a, %none : i32
            tile.yield %r : i32
          }
          tile.scatter %k, %keys[%key_at] : !slots, memref<?x?xi32>, !slots
          // Repeats take the next free entries in slot order.
          %repeat = tile.map %entry, %open_at : !slots, !slots -> !slots {
          ^bb0(%e: i32, %o: i32):
            %valid = arith.cmpi sge, %e, %zero : i32
            %not_first = arith.cmpi slt, %o, %zero : i32
            %rep = arith.andi %valid, %not_first : i1
            %r = arith.extui %rep : i1 to i32
            tile.yield %r : i32
          }
          %upto_rep = tile.scan add %repeat : !slots
          %next = tile.gather %ends[%zero_pos] : !ends, !slots -> !slots
          %extra_at = tile.map %repeat, %upto_rep, %next : !slots, !slots, !slots -> !slots {
          ^bb0(%rp: i32, %u: i32, %n: i32):
            %ok = arith.cmpi ne, %rp, %zero : i32
            %earlier = arith.subi %u, %rp : i32
            %e = arith.addi %n, %earlier : i32
            %a = arith.addi %row_base, %e : i32
            %r = arith.select %ok, %a, %none : i32
            tile.yield %r : i32
          }
          tile.scatter %k, %keys[%extra_at] : !slots, memref<?x?xi32>, !slots
          tile.scatter %token_bit, %bits[%extra_at] : !slots, memref<?x?xi32>, !slots
          %end = tile.map %upto_rep, %next : !slots, !slots -> !slots {
          ^bb0(%u: i32, %n: i32):
            %r = arith.addi %n, %u : i32
            tile.yield %r : i32
          }
          tile.barrier                     // all have read the next free entry
          tile.scatter %end, %ends[%last_pos] : !slots, !ends, !slots
          tile.barrier
        } else {
          %unused = tile.atomic_rmw max %tag, %best[%entry] : !slots, !entries, !slots
        }
      }
      tile.barrier                         // the pass is complete
    }
  }
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
