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
// its own bit after them, in the order of the tokens and of their slots.
// So the backward weights each (key, token) pair by its multiplicity and
// stays exactly the per-token backward, and every entry's place depends on
// the indices alone, never on the order of atomics: the backward's dq,
// summed in that order, is bitwise repeatable.
//   1. mark: set bit k of a bitmap over the keys for every valid slot
//   2. rank: the exclusive prefix sum of the bitmap words' popcounts gives
//      the first entry of each word's keys, hence each key's entry
//   3. pick: OR the token's bit into its key's entry; the slot that opens
//      the entry writes the key; a slot that finds its token's bit already
//      set is a repeat (only flagged here)
//   4. repeats, only in a tile that has some, token by token: each slot
//      offers a tag to its entry in an atomic max (the first slot of a key
//      in the row has the largest), and every slot but the winner takes
//      the next free entry after the union, in slot order (a prefix sum)
//   5. write the union's token bits and the number of entries
//
// Generic over {nb} bitmap words (Skv <= 32 * nb) and {cap} entries
// (T * topk <= cap); the Python package picks the smallest variant.

!bitmap = !tile.smem<1x{nb}xi32>
!entries = !tile.smem<1x{cap}xi32>
// 1024 slots of a token's row, a 4-byte load a thread: rows of topk
// indices are not 16-byte aligned in general.
!slots = !tile.reg<1x1024xi32, #tile.blocked<vector = 1, lanes = 128>>
!slot_smem = !tile.smem<1x1024xi32>
!ends = !tile.smem<1x4xi32>              // next free entry, union size, repeats?
!one_row = !tile.reg<1x128xi32>
!row_smem = !tile.smem<1x128xi32>
!tokens = !tile.smem<2x128xi32>          // per token: key limit, slots read
!flag_slots = !tile.reg<1x1024xi1, #tile.blocked<vector = 1, lanes = 128>>

tile.kernel @sparse_mla_union(
    %indices: memref<?x?x?xi32> [%batch * %seq_len, ?, ?],        // [B * S, G, topk]
    %lengths: memref<?x?xi32> [%batch * %seq_len, ?] optional,    // [B * S, G or 1] live slots
    // Per (tile, group) of the launch: its entries' keys and token bits
    // (T * topk entries, the first `counts` in use).
    %keys: memref<?x?xi32> [%tiles * %indices[1], %tile_tokens * %indices[2]],
    %bits: memref<?x?xi32> [%tiles * %indices[1], %tile_tokens * %indices[2]],
    %counts: memref<?xi32> [%tiles * %indices[1]],
    %batch: index, %seq_len: index, %kv_len: index,
    %tile_tokens: index,           // T <= 31
    %first_tile: index,            // the launch's tiles: [first_tile, first_tile + tiles)
    %tiles: index,
    %causal: i32,
    %q_offset: i32) warpgroups(1)  // position of token 0 of each batch row
    // x: the launch's tiles of T tokens (batch row b, tile of the row); y: kv groups.
    grid([b : %batch, tile : %seq_len ceildiv %tile_tokens] window(slot : %tiles from %first_tile),
         [g : %indices[1]])
    variants([{nb = 1024, cap = 8192}, {nb = 1024, cap = 16384},
              {nb = 8192, cap = 8192}, {nb = 8192, cap = 16384}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c1024 = arith.constant 1024 : index
  %true = arith.constant true
  %c2_i32 = arith.constant 2 : i32
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %none = arith.constant -1 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %c26 = arith.constant 26 : i32
  %c31 = arith.constant 31 : i32
  %c128 = arith.constant 128 : i32
  %c1023 = arith.constant 1023 : i32
  %tag_low = arith.constant 67108863 : i32   // 2^26 - 1
  %cap = tile.param "cap" : index
  %nb = tile.param "nb" : index
  %groups = memref.dim %indices, %c1 : memref<?x?x?xi32>
  %topk = memref.dim %indices, %c2 : memref<?x?x?xi32>
  %width = memref.dim %keys, %c1 : memref<?x?xi32>
  %length_groups = memref.dim %lengths, %c1 : memref<?x?xi32>

  // This CTA's tokens [t0, t0 + tn) of batch row b, and its row of the output.
  %b = tile.work_id "b"
  %in_row = tile.work_id "tile"
  %local = tile.work_id "slot"
  %g = tile.work_id "g"
  %s0, %tn, %t0 = smla.token_tile %in_row of row %b tokens %tile_tokens per_row %seq_len
  %out_row = arith.muli %local, %groups : index
  %row = arith.addi %out_row, %g : index
  %row_i32 = arith.index_cast %row : index to i32
  %width_i32 = arith.index_cast %width : index to i32
  %row_base = arith.muli %row_i32, %width_i32 : i32
  %kv_len_i32 = arith.index_cast %kv_len : index to i32
  %topk_i32 = arith.index_cast %topk : index to i32
  %is_causal = arith.cmpi ne, %causal, %zero : i32

  %bitmap = tile.alloc : !bitmap
  %first = tile.alloc : !bitmap            // first entry of each word's keys
  %entry_bits = tile.alloc : !entries
  %ends = tile.alloc : !ends
  %per_token = tile.alloc : !tokens
  %no_slots = tile.splat %zero : !slots
  scf.for %w = %c0 to %nb step %c1024 {
    %chunk = tile.slice %bitmap[%c0, %w] : !bitmap to !slot_smem
    tile.write %no_slots, %chunk : !slots, !slot_smem
  }
  scf.for %e = %c0 to %cap step %c1024 {
    %chunk = tile.slice %entry_bits[%c0, %e] : !entries to !slot_smem
    tile.write %no_slots, %chunk : !slots, !slot_smem
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

  // Token t (lane t) reads the slots below len(t) and the keys below
  // limit(t): min(Skv, q_offset + s + 1) when causal, else Skv.
  %lane = tile.iota along 1 : !one_row
  %s0_i32 = arith.index_cast %s0 : index to i32
  %t0_i32 = arith.index_cast %t0 : index to i32
  %g_i32 = arith.index_cast %g : index to i32
  %lgs_i32 = arith.index_cast %length_groups : index to i32
  %tn_i32 = arith.index_cast %tn : index to i32
  %limits = tile.map %lane : !one_row -> !one_row {
  ^bb0(%t: i32):
    %s = arith.addi %s0_i32, %t : i32
    %at = arith.addi %s, %q_offset : i32
    %next = arith.addi %at, %one : i32
    %upto = arith.minsi %next, %kv_len_i32 : i32
    %r = arith.select %is_causal, %upto, %kv_len_i32 : i32
    tile.yield %r : i32
  }
  %length_at = tile.map %lane : !one_row -> !one_row {
  ^bb0(%t: i32):
    %tok = arith.addi %t0_i32, %t : i32
    %last_group = arith.subi %lgs_i32, %one : i32
    %lg = arith.minsi %g_i32, %last_group : i32
    %first_of = arith.muli %tok, %lgs_i32 : i32
    %at = arith.addi %first_of, %lg : i32
    %has = arith.cmpi sgt, %lgs_i32, %zero : i32
    %mine = arith.cmpi slt, %t, %tn_i32 : i32
    %ok = arith.andi %has, %mine : i1
    %r = arith.select %ok, %at, %none : i32
    tile.yield %r : i32
  }
  %given = tile.gather %lengths[%length_at] pad %topk_i32
      : memref<?x?xi32>, !one_row, i32 -> !one_row
  %lens = tile.map %given : !one_row -> !one_row {
  ^bb0(%l: i32):
    %lo = arith.maxsi %l, %zero : i32
    %r = arith.minsi %lo, %topk_i32 : i32
    tile.yield %r : i32
  }
  %limits_at = tile.slice %per_token[%c0, %c0] : !tokens to !row_smem
  %lens_at = tile.slice %per_token[%c1, %c0] : !tokens to !row_smem
  tile.write %limits, %limits_at : !one_row, !row_smem
  tile.write %lens, %lens_at : !one_row, !row_smem
  tile.barrier

  // 1. mark. `word` is -1 for a slot that is not valid.
  scf.for %t = %c0 to %tn step %c1 {
    %tok = arith.addi %t0, %t : index
    %t_i32 = arith.index_cast %t : index to i32
    %t_at = tile.splat %t_i32 : !slots
    %lim = tile.gather %per_token[%t_at] : !tokens, !slots -> !slots
    %len_at = tile.map %t_at : !slots -> !slots {
    ^bb0(%x: i32):
      %r = arith.addi %x, %c128 : i32
      tile.yield %r : i32
    }
    %len = tile.gather %per_token[%len_at] : !tokens, !slots -> !slots
    scf.for %j = %c0 to %topk step %c1024 {
      %k = tile.load %indices[%tok, %g, %j] bounds [%groups, %topk] pad %none
          : memref<?x?x?xi32>, i32 -> !slots
      %j_i32 = arith.index_cast %j : index to i32
      %word = tile.map %k, %pos, %lim, %len : !slots, !slots, !slots, !slots -> !slots {
      ^bb0(%key: i32, %p: i32, %l: i32, %n: i32):
        %slot = arith.addi %j_i32, %p : i32
        %read = arith.cmpi slt, %slot, %n : i32
        %lo = arith.cmpi sge, %key, %zero : i32
        %hi = arith.cmpi slt, %key, %l : i32
        %in = arith.andi %lo, %hi : i1
        %ok = arith.andi %in, %read : i1
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

  // 3. pick and 4. repeats, token by token: pass 0 picks; passes 1 (tag)
  // and 2 (place) run for a token whose row repeats a key. A slot's tag is
  // larger for an earlier slot of its row and for any slot of a later
  // token: t * 2^26 + 2^26 - 1 - j (topk < 2^26, T <= 31), so the tags
  // need no reset between tokens; they live in this tile's row of `bits`
  // (zeroed before the first tag pass) until step 5 writes the union's
  // bits there.
  %zero_pos = tile.splat %zero : !slots
  %two_pos = tile.splat %c2_i32 : !slots
  %size = tile.gather %ends[%one_pos] : !ends, !slots -> !slots
  %false = arith.constant false
  %unused_ready = scf.for %t = %c0 to %tn step %c1 iter_args(%ready = %false) -> (i1) {
    %tok = arith.addi %t0, %t : index
    %t_i32 = arith.index_cast %t : index to i32
    %t_at = tile.splat %t_i32 : !slots
    %t_len = arith.addi %t_i32, %c128 : i32
    %len_at = tile.splat %t_len : !slots
    %lim = tile.gather %per_token[%t_at] : !tokens, !slots -> !slots
    %len = tile.gather %per_token[%len_at] : !tokens, !slots -> !slots
    %tbit = arith.shli %one, %t_i32 : i32
    %token_bit = tile.splat %tbit : !slots
    %tag_high = arith.shli %t_i32, %c26 : i32
    %tag0 = arith.addi %tag_high, %tag_low : i32
    %rep_out, %ready_out = scf.for %pass = %c0 to %c3 step %c1
        iter_args(%rep = %false, %have_scratch = %ready) -> (i1, i1) {
      %picking = arith.cmpi eq, %pass, %c0 : index
      %tagging = arith.cmpi eq, %pass, %c1 : index
      %run = arith.ori %picking, %rep : i1
      scf.if %run {
        scf.for %j = %c0 to %topk step %c1024 {
          %k = tile.load %indices[%tok, %g, %j] bounds [%groups, %topk] pad %none
              : memref<?x?x?xi32>, i32 -> !slots
          %j_i32 = arith.index_cast %j : index to i32
          %word = tile.map %k, %pos, %lim, %len : !slots, !slots, !slots, !slots -> !slots {
          ^bb0(%key: i32, %p: i32, %l: i32, %n: i32):
            %slot = arith.addi %j_i32, %p : i32
            %read = arith.cmpi slt, %slot, %n : i32
            %lo = arith.cmpi sge, %key, %zero : i32
            %hi = arith.cmpi slt, %key, %l : i32
            %in = arith.andi %lo, %hi : i1
            %ok = arith.andi %in, %read : i1
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
          %tag_j = arith.subi %tag0, %j_i32 : i32
          // The slot's place in this tile's row of `bits` (-1: not valid).
          %tag_at = tile.map %entry : !slots -> !slots {
          ^bb0(%e: i32):
            %ok = arith.cmpi sge, %e, %zero : i32
            %a = arith.addi %row_base, %e : i32
            %r = arith.select %ok, %a, %none : i32
            tile.yield %r : i32
          }
          %tag = tile.map %pos : !slots -> !slots {
          ^bb0(%p: i32):
            %r = arith.subi %tag_j, %p : i32
            tile.yield %r : i32
          }
          scf.if %picking {
            %old = tile.atomic_rmw or %token_bit, %entry_bits[%entry] : !slots, !entries, !slots
            // The slot that opens an entry writes its key; one that finds
            // its token's bit set flags a repeat.
            %key_at = tile.map %tag_at, %old : !slots, !slots -> !slots {
            ^bb0(%a: i32, %o: i32):
              %fresh = arith.cmpi eq, %o, %zero : i32
              %r = arith.select %fresh, %a, %none : i32
              tile.yield %r : i32
            }
            tile.scatter %k, %keys[%key_at] : !slots, memref<?x?xi32>, !slots
            %flag_at = tile.map %entry, %old : !slots, !slots -> !slots {
            ^bb0(%e: i32, %o: i32):
              %ok = arith.cmpi sge, %e, %zero : i32
              %mine = arith.andi %o, %tbit : i32
              %seen = arith.cmpi ne, %mine, %zero : i32
              %rep_slot = arith.andi %ok, %seen : i1
              %r = arith.select %rep_slot, %c2_i32, %none : i32
              tile.yield %r : i32
            }
            tile.scatter %one_pos, %ends[%flag_at] : !slots, !ends, !slots
          } else {
            scf.if %tagging {
              %unused = tile.atomic_rmw max %tag, %bits[%tag_at] : !slots, memref<?x?xi32>, !slots
            } else {
              // Every slot but its key's first in the row is a repeat: the
              // next free entries, in slot order.
              %won = tile.gather %bits[%tag_at] pad %zero : memref<?x?xi32>, !slots, i32 -> !slots
              %repeat = tile.map %tag_at, %won, %tag : !slots, !slots, !slots -> !slots {
              ^bb0(%a: i32, %w: i32, %tg: i32):
                %valid = arith.cmpi sge, %a, %zero : i32
                %later = arith.cmpi ne, %w, %tg : i32
                %r0 = arith.andi %valid, %later : i1
                %r = arith.extui %r0 : i1 to i32
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
              tile.barrier                 // all have read the next free entry
              tile.scatter %end, %ends[%last_pos] : !slots, !ends, !slots
              tile.barrier
            }
          }
        }
      }
      tile.barrier                         // the pass is complete
      // After its pick: whether the token repeats a key (ends[2], cleared
      // for the next token), and the tags' room zeroed on the first repeat.
      %rep_next, %scratch_next = scf.if %picking -> (i1, i1) {
        %flags = tile.gather %ends[%two_pos] : !ends, !slots -> !slots
        %flagged = tile.map %flags : !slots -> !flag_slots {
        ^bb0(%f: i32):
          %r = arith.cmpi ne, %f, %zero : i32
          tile.yield %r : i1
        }
        %repeats = tile.any %flagged : !flag_slots
        %fresh_scratch = arith.xori %have_scratch, %true : i1
        %zero_now = arith.andi %repeats, %fresh_scratch : i1
        scf.if %repeats {
          tile.barrier                     // all have read the flag
          tile.scatter %zero_pos, %ends[%two_pos] : !slots, !ends, !slots
        }
        scf.if %zero_now {
          scf.for %e = %c0 to %cap step %c1024 {
            %e_i32 = arith.index_cast %e : index to i32
            %room = tile.map %pos, %size : !slots, !slots -> !slots {
            ^bb0(%p: i32, %n: i32):
              %i = arith.addi %p, %e_i32 : i32
              %ok = arith.cmpi slt, %i, %n : i32
              %a = arith.addi %row_base, %i : i32
              %r = arith.select %ok, %a, %none : i32
              tile.yield %r : i32
            }
            tile.scatter %zero_pos, %bits[%room] : !slots, memref<?x?xi32>, !slots
          }
        }
        tile.barrier
        %have = arith.ori %have_scratch, %repeats : i1
        scf.yield %repeats, %have : i1, i1
      } else {
        scf.yield %rep, %have_scratch : i1, i1
      }
      scf.yield %rep_next, %scratch_next : i1, i1
    }
    scf.yield %ready_out : i1
  }

  // 5. write the union's token bits, then the number of entries.
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
