"""The key-range work order of long contexts (bench/NOTES.md "Key ranges") on a GPU
against the float64 reference, with ranges forced small so that a small Skv
spans many of them: per token and in token tiles, kv groups, batches, both
causal modes, repeated keys, rows whose keys fill one range or skip some,
CTAs without slots, a clock whose rounds never fill (bounded waits), and the
deterministic mode (bitwise the same with and without ranges)."""

import pytest
import torch

import sparse_mla
from sparse_mla import _runtime
from gpu_cases import make_case, run_and_check

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def run_with_ranges(args, kw, range_keys):
    stats = {}
    out = run_and_check(args, dict(kw, key_ranges=range_keys, stats=stats))
    assert stats["range_keys"] == range_keys
    return out, stats


@pytest.mark.parametrize("h,token_tile", [(64, None), (16, None), (16, 1), (128, None)])
@pytest.mark.parametrize("causal", [True, False])
def test_ranges_match_the_reference(h, token_tile, causal):
    args, kw = make_case(192, h, 256, skv=1024, causal=causal, seed=60 + h,
                         token_tile=token_tile)
    _, stats = run_with_ranges(args, kw, 64)
    if token_tile == 1 or h >= 64:
        assert stats["tile_tokens"] == 1


@pytest.mark.parametrize("batched", [True, False])
def test_ranges_with_kv_groups_and_batches(batched):
    args, kw = make_case(96, 32, 128, b=2 if batched else 1, g=2, skv=700, seed=61,
                         batched=batched)
    run_with_ranges(args, kw, 128)


def test_ranges_at_the_tail_of_a_long_sequence():
    # A context-parallel rank's queries at the end of Skv keys, with lengths.
    s, skv, topk = 128, 4096, 512
    gen = torch.Generator(device="cuda").manual_seed(62)
    lengths = torch.randint(0, topk + 1, (1, s), device="cuda", generator=gen,
                            dtype=torch.int32)
    args, kw = make_case(s, 16, topk, skv=skv, seed=62, q_offset=skv - s, topk_length=lengths)
    run_with_ranges(args, kw, 256)


@pytest.mark.parametrize("token_tile", [None, 1])
def test_rows_in_one_range_beside_rows_that_skip_ranges(token_tile):
    # Even tokens pick only keys of range 5, odd tokens keys of ranges 0 and
    # 9 (none in between); repeats inside rows.
    s, skv, topk = 64, 1024, 64
    gen = torch.Generator(device="cuda").manual_seed(63)
    one = 320 + torch.randint(0, 64, (s, topk), device="cuda", generator=gen)
    ends = torch.where(torch.rand(s, topk, device="cuda", generator=gen) < 0.5,
                       torch.randint(0, 64, (s, topk), device="cuda", generator=gen),
                       576 + torch.randint(0, 64, (s, topk), device="cuda", generator=gen))
    idx = torch.where((torch.arange(s, device="cuda") % 2 == 0)[:, None], one, ends)
    idx = idx.int().view(1, s, 1, topk)
    args, kw = make_case(s, 16, topk, skv=skv, causal=False, indices=idx, seed=63,
                         token_tile=token_tile)
    run_with_ranges(args, kw, 64)


def test_ctas_without_slots_pass_every_range():
    s, topk = 128, 128
    lengths = torch.full((1, s), topk, dtype=torch.int32, device="cuda")
    lengths[0, ::3] = 0
    args, kw = make_case(s, 64, topk, skv=2048, causal=False, seed=64, topk_length=lengths)
    run_with_ranges(args, kw, 64)


@pytest.mark.parametrize("h", [16, 64])
def test_dq_is_bitwise_repeatable_with_ranges(h):
    args, kw = make_case(256, h, 256, skv=2048, seed=65)
    runs = [sparse_mla.sparse_mla_bwd(*args, **dict(kw, key_ranges=128))[0] for _ in range(3)]
    assert all(torch.equal(runs[0], r) for r in runs[1:])
    if h == 16:   # token tiles: the same union with and without the clock
        assert torch.equal(runs[0], sparse_mla.sparse_mla_bwd(*args, **kw)[0])


@pytest.mark.parametrize("h", [16, 64])
def test_deterministic_ranges_give_the_same_bits_as_none(h):
    # The fixed point's sums are exact in any order: with ranges (on by
    # default from 9.1K keys, token tiles too) dkv is bitwise the one
    # without, and both match the reference. dq is too with token tiles,
    # whose unions are in key order either way; per token the ranges sum a
    # row's slots in key order, not in the row's.
    args, kw = make_case(256, h, 256, skv=2048, seed=67)
    kw = dict(kw, deterministic=True)
    (dq, dkv), stats = run_with_ranges(args, kw, 128)
    dq_off, dkv_off = sparse_mla.sparse_mla_bwd(*args, **dict(kw, key_ranges=False))
    assert torch.equal(dkv, dkv_off)
    assert (stats["tile_tokens"] > 1) == (h == 16)
    if h == 16:
        assert torch.equal(dq, dq_off)


def test_a_clock_whose_rounds_never_fill_only_waits_a_bounded_time(monkeypatch):
    # One round of all 512 CTAs, more than the GPU holds at once: the first
    # waits run out, the round's clock stops, and the result is unchanged.
    monkeypatch.setattr(_runtime, "resident_ctas", lambda name, device: 1 << 20)
    args, kw = make_case(512, 64, 256, skv=1024, causal=False, seed=66)
    run_with_ranges(args, kw, 64)
