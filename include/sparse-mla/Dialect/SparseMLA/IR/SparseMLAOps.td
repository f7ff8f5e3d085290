//===- SparseMLAOps.td - Ops of the sparse-MLA kernels -----*- tablegen -*-===//
//
// What the sparse-MLA kernels (backward, forward, KL target, union builder)
// compute in common and nothing else does: which rows a token tile's
// (token, head) columns read, how many slots a row uses, which kv rows its
// keys gather and below which key, and the key ranges' clock of long
// contexts. They sit beside the general tile dialect,
// as NVWS beside TritonGPU, and lower to tile and arith ops.
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_SPARSEMLA_OPS
#define SPARSE_MLA_SPARSEMLA_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def SparseMLA_Dialect : Dialect {
  let name = "smla";
  let cppNamespace = "::sparse_mla::smla";
  let summary = "The sparse-MLA kernels' own ops, lowered to tile ops";
  let description = [{
    Ops that only the DeepSeek-sparse-attention kernels need, so that the
    tile dialect stays a general tile language and each kernel states them
    once: a token tile's tokens (`smla.token_tile`) and columns
    (`smla.columns`), the slots a row uses (`smla.slot_count`), the keys
    it may read (`smla.key_limit`) and their kv rows (`smla.key_rows`), the
    key ranges' clock (`smla.key_clock`).
    `smla-lower-to-tile` and `smla-expand-key-clocks` write them out in
    tile, arith and scf ops.
  }];
  let dependentDialects = ["::sparse_mla::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

class SparseMLA_Op<string mnemonic, list<Trait> traits = []>
    : Op<SparseMLA_Dialect, mnemonic, traits>;

def SparseMLA_I32Tile : Type<CPred<"::sparse_mla::smla::isI32Vector($_self)">,
    "1-D register tile of i32", "::sparse_mla::tile::RegTileType">;

def SparseMLA_TokenTileOp : SparseMLA_Op<"token_tile", [Pure]> {
  let summary = "The tokens of a token tile";
  let description = [{
    Tile `tile` of batch row `batch_row`, with `tile_tokens` (T) tokens a
    tile and `seq_len` (S) tokens a row: its first token's position in the
    row `first` = tile * T, its tokens `count` = min(T, S - first) (the last
    tile of a row may have fewer), and that first token's row among the
    [B * S] tokens, `row` = batch_row * S + first.

    ```mlir
    %s0, %tn, %t0 = smla.token_tile %tile of row %b tokens %t per_row %s
    ```
  }];
  let arguments = (ins Index:$tile, Index:$batch_row, Index:$tile_tokens, Index:$seq_len);
  let results = (outs Index:$first, Index:$count, Index:$row);
  let assemblyFormat = [{
    $tile `of` `row` $batch_row `tokens` $tile_tokens `per_row` $seq_len attr-dict
  }];
}

def SparseMLA_ColumnsOp : SparseMLA_Op<"columns", [Pure, AllTypesMatch<["rows", "tokens"]>]> {
  let summary = "The q rows and tokens of a token tile's (token, head) columns";
  let description = [{
    A CTA of a token tile works on (token, head) columns: `per_token` heads
    of each of its `tokens` tokens (the first at row `first_token` of the
    [B * S] tokens), from head `first_head` of the `heads` heads of a row,
    of which `heads_left` remain in the group. Element c of the results is
    column `first + c`: its token t = (first + c) / per_token and head h =
    (first + c) % per_token. `rows` is the row of q, do and dq, (first_token
    + t) * heads + first_head + h, or -1 for a padding column (t >= tokens
    or h >= heads_left); `tokens` is t.

    ```mlir
    %rows, %token = smla.columns from %c tokens %t0 count %tn heads %h0 count %left
                      per_token %cpt row_heads %heads : !tile.reg<16xi32>
    ```
  }];
  let arguments = (ins Index:$first, Index:$first_token, Index:$token_count,
                       Index:$first_head, Index:$heads_left, Index:$per_token, Index:$heads);
  let results = (outs SparseMLA_I32Tile:$rows, SparseMLA_I32Tile:$tokens);
  let assemblyFormat = [{
    `from` $first `tokens` $first_token `count` $token_count `heads` $first_head `count`
    $heads_left `per_token` $per_token `row_heads` $heads attr-dict `:` qualified(type($rows))
  }];
}

def SparseMLA_SlotCountOp : SparseMLA_Op<"slot_count", [MemoryEffects<[MemRead]>]> {
  let summary = "The slots in use of a row of a slot table";
  let description = [{
    Row `row` of a table of `width` slots (the topk indices, or a token
    tile's union) uses its first `count` slots: the i32 count in `counts` at
    (`row`, `group`), or at the last column where `counts` has fewer (one
    count per row for every kv group), clamped to [0, `width`]; `counts`
    with no columns (absent): all `width`. The count is formed in 32 bits
    (a block loop's bound).

    ```mlir
    %n = smla.slot_count %counts[%row, %g] width %w : memref<?x?xi32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I32], [2]>:$counts, Index:$row, Index:$group,
                       Index:$width);
  let results = (outs Index:$count);
  let assemblyFormat = [{
    $counts `[` $row `,` $group `]` `width` $width attr-dict `:` qualified(type($counts))
  }];
}

def SparseMLA_KeyLimitOp : SparseMLA_Op<"key_limit", [Pure]> {
  let summary = "The keys a token tile may read: below Skv, or below its causal bound";
  let description = [{
    The first key no token of the tile may read: `kv_len` (Skv), or where
    `causal` is non-zero min(`q_offset` + `tokens_end`, Skv), `tokens_end`
    being the row position just past the tile's last token (its keys at or
    past that are in the future of every token of the tile). The bound of
    `smla.key_rows`.

    ```mlir
    %limit = smla.key_limit %kv_len before %s_end offset %q_offset causal %causal
    ```
  }];
  let arguments = (ins Index:$kv_len, Index:$tokens_end, I32:$q_offset, I32:$causal);
  let results = (outs I32:$limit);
  let assemblyFormat = [{
    $kv_len `before` $tokens_end `offset` $q_offset `causal` $causal attr-dict
  }];
}

def SparseMLA_KeyRowsOp : SparseMLA_Op<"key_rows", [Pure, AllTypesMatch<["keys", "rows"]>]> {
  let summary = "The kv rows of a tile's keys, -1 for the keys it must not read";
  let description = [{
    Key k of `keys` is valid if 0 <= k < `limit` (Skv, or the causal bound
    of the tile); its kv row is (`first` + k) * `groups` + `group` (`first`:
    the batch row's first key, b * Skv). An invalid key gets -1: no row is
    read or written for it.

    ```mlir
    %rows = smla.key_rows %keys below %limit first %first groups %g of %groups
              : !tile.reg<64xi32>
    ```
  }];
  let arguments = (ins SparseMLA_I32Tile:$keys, I32:$limit, I32:$first, I32:$group,
                       I32:$groups);
  let results = (outs SparseMLA_I32Tile:$rows);
  let assemblyFormat = [{
    $keys `below` $limit `first` $first `groups` $group `of` $groups attr-dict `:`
    qualified(type($keys))
  }];
}

def SparseMLA_KeyClockOp : SparseMLA_Op<"key_clock", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Keeps the CTAs that run together on one range of keys";
  let description = [{
    The key-range work order of long contexts, in the body of an `scf.for`
    from 0 that walks row `row` of `keys` (i32 keys in increasing order) a
    block of `step` slots at a time, up to its upper bound. The keys fall in
    ranges of `range` keys (a power of two); `clock` ([rounds, ranges] i32,
    zeroed; no columns: no clock) counts, per round of `round_ctas` CTAs in
    launch order (x fastest, the last round what is left), the CTAs that have
    passed each range. A block passes the ranges from the first key of the
    block before to its own (the last block all the others), then the CTA
    waits until every CTA of its round has passed range r - `window` - 1 as
    it enters range r, so that the rows they add into stay in L2. A CTA whose
    loop runs no block passes every range before it.

    The clock is advisory: no result depends on it, a wait is bounded, and
    a wait that runs out stops its round's clock (its counters jump past
    every later wait), so that a round with a CTA that is not resident costs
    one timeout per CTA, never a hang. `smla-expand-key-clocks` writes it out
    in `tile.counter_add`, `tile.counter_wait` and scf.

    ```mlir
    scf.for %j = %c0 to %n step %c64 {
      smla.key_clock %clock, %keys[%row] range %range round %ctas window %w
          : memref<?x?xi32>, memref<?x?xi32>
      ...
    ```
  }];
  let arguments = (ins AnyMemRef:$clock, AnyMemRef:$keys, Index:$row, Index:$range,
                       Index:$round_ctas, I32:$window);
  let assemblyFormat = [{
    $clock `,` $keys `[` $row `]` `range` $range `round` $round_ctas `window` $window attr-dict
    `:` qualified(type($clock)) `,` qualified(type($keys))
  }];
  let hasVerifier = 1;
}

#endif
