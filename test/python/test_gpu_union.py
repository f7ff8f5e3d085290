"""The union builder of token tiles (kernels/sparse_mla_union.mlir) on a GPU,
entry by entry against sparse_mla.reference.token_tile_union, on fresh random
indices with invalid, future, repeated and shared keys and poisoned outputs."""
import pytest
import torch

import sparse_mla
from sparse_mla import _runtime
from sparse_mla.reference import token_tile_union

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def build(indices, seq_len, kv_len, tile_tokens, is_causal, first=0, tiles=None,
          topk_length=None, q_offset=0):
    tokens, g, topk = indices.shape
    all_tiles = (tokens // seq_len) * -(-seq_len // tile_tokens)
    tiles = all_tiles - first if tiles is None else tiles
    width = tile_tokens * topk
    keys = torch.full((tiles * g, width), -7, dtype=torch.int32, device="cuda")
    bits = torch.full_like(keys, -7)
    counts = torch.full((tiles * g,), -7, dtype=torch.int32, device="cuda")
    name = sparse_mla.plan.select_union(kv_len, width)
    lengths = None if topk_length is None else topk_length.view(tokens, -1)
    _runtime.launch(name,
                    dict(indices=indices, lengths=lengths, keys=keys, bits=bits, counts=counts,
                         batch=tokens // seq_len, seq_len=seq_len, kv_len=kv_len,
                         tile_tokens=tile_tokens, first_tile=first, tiles=tiles,
                         causal=int(is_causal), q_offset=q_offset),
                    0, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    return keys.cpu(), bits.cpu(), counts.cpu()


def check_rows(indices, seq_len, kv_len, tile_tokens, is_causal, first=0, tiles=None,
               topk_length=None, q_offset=0):
    keys, bits, counts = build(indices, seq_len, kv_len, tile_tokens, is_causal, first, tiles,
                               topk_length, q_offset)
    want = token_tile_union(indices, seq_len, kv_len, tile_tokens, is_causal, topk_length,
                            q_offset)
    g = indices.shape[1]
    want = want[first * g:first * g + keys.shape[0]]
    for row, (union, repeats) in enumerate(want):
        n = int(counts[row])
        assert n == len(union) + len(repeats), f"row {row}: {n} entries"
        got = list(zip(keys[row, :n].tolist(), bits[row, :n].tolist()))
        assert got[:len(union)] == union, f"row {row}: union differs"
        # Repeats in the order of their tokens and slots: the same on every run.
        assert got[len(union):] == repeats, f"row {row}: repeats differ"


@pytest.mark.parametrize("tile_tokens", [2, 4, 8])
@pytest.mark.parametrize("is_causal", [True, False])
def test_union_of_random_rows(tile_tokens, is_causal):
    gen = torch.Generator(device="cuda").manual_seed(tile_tokens + 10 * is_causal)
    b, s, g, topk, skv = 2, 37, 2, 150, 300
    idx = torch.randint(-5, skv + 20, (b * s, g, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[3, 0, 10:40] = idx[3, 0, 0]                 # one key many times in a row
    idx[4, 1] = idx[5, 1]                           # two tokens with the same keys
    idx[6] = -1                                     # a token without keys
    check_rows(idx, s, skv, tile_tokens, is_causal)


def test_union_with_wide_rows_and_long_kv():
    # topk beyond one 1024-slot chunk; keys beyond the small bitmap (8192 words).
    gen = torch.Generator(device="cuda").manual_seed(3)
    s, g, topk, skv = 9, 1, 2000, 200000
    idx = torch.randint(0, skv, (s, g, topk), device="cuda", generator=gen, dtype=torch.int32)
    idx[:, 0, 1000:1900] = torch.arange(900, device="cuda", dtype=torch.int32)  # shared
    check_rows(idx, s, skv, 4, False)


def test_union_of_a_range_of_tiles():
    # A launch may cover tiles [first, first + n): the rows are its own.
    gen = torch.Generator(device="cuda").manual_seed(4)
    s, topk, skv = 64, 100, 64
    idx = torch.randint(0, skv, (s, 1, topk), device="cuda", generator=gen, dtype=torch.int32)
    check_rows(idx, s, skv, 4, True, first=5, tiles=7)


@pytest.mark.parametrize("per_group", [False, True])
def test_union_reads_the_first_topk_length_slots(per_group):
    # Lengths below 0, 0, inside, topk and beyond; keys past a row's length
    # (repeats and shared keys among them) are not in its union.
    gen = torch.Generator(device="cuda").manual_seed(5)
    s, g, topk, skv = 24, 2, 1500, 400
    idx = torch.randint(0, skv, (s, g, topk), device="cuda", generator=gen, dtype=torch.int32)
    idx[3, :, 1100:] = idx[3, :, 0:1]
    shape = (s, g) if per_group else (s, 1)
    lengths = torch.randint(-3, topk + 50, shape, device="cuda", generator=gen,
                            dtype=torch.int32)
    lengths[0], lengths[1], lengths[2], lengths[3] = -5, 0, topk, 1100
    check_rows(idx, s, skv, 4, True, topk_length=lengths)


@pytest.mark.parametrize("q_offset", [-40, 0, 37, 10000])
def test_union_with_a_query_offset(q_offset):
    # Token s is at position q_offset + s: a key is in its future past it.
    gen = torch.Generator(device="cuda").manual_seed(6)
    s, topk, skv = 30, 64, 100
    idx = torch.randint(-2, skv, (s, 1, topk), device="cuda", generator=gen, dtype=torch.int32)
    check_rows(idx, s, skv, 8, True, q_offset=q_offset)


def test_union_is_bitwise_repeatable():
    # Many repeats of few keys: their entries land in the same places each run.
    gen = torch.Generator(device="cuda").manual_seed(7)
    s, topk, skv = 64, 2048, 50
    idx = torch.randint(0, skv, (s, 1, topk), device="cuda", generator=gen, dtype=torch.int32)
    first = build(idx, s, skv, 8, False)
    for _ in range(5):
        again = build(idx, s, skv, 8, False)
        for a, b in zip(first, again):
            assert torch.equal(a, b)
