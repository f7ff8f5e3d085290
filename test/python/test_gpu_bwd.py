"""The sparse-MLA backward on a GPU against the float64 reference, on fresh
random inputs (o and lse from a real forward) with NaN-poisoned outputs."""
import pytest
import torch

import sparse_mla
from gpu_cases import check, make_case, reference, run_and_check
from sparse_mla.reference import sparse_mla_bwd_reference, sparse_mla_fwd_reference

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("s,h,topk", [(256, 16, 64), (512, 16, 128), (512, 64, 256),
                                      (1024, 64, 512), (4096, 64, 2048)])
def test_parity_cases(s, h, topk):
    run_and_check(*make_case(s, h, topk, seed=s + h + topk))


@pytest.mark.parametrize("h", [1, 8, 16, 24, 32, 64, 96, 128])
@pytest.mark.parametrize("topk", [100, 2048])
@pytest.mark.parametrize("token_tile", [None, 1])
def test_heads_and_topk(h, topk, token_tile):
    # Non-causal over a longer kv: every slot of topk = 2048 is used. By
    # default tokens share tiles up to 64 columns; token_tile=1 is per token.
    run_and_check(*make_case(128, h, topk, skv=4096 if topk > 1000 else 300, causal=False,
                             seed=h * topk, token_tile=token_tile))


def test_two_kv_groups():
    run_and_check(*make_case(300, 32, 128, g=2, seed=2))


def test_no_rope_tail():
    run_and_check(*make_case(300, 16, 128, d_tail=0, seed=3))


def test_batched_and_unbatched():
    run_and_check(*make_case(200, 16, 96, b=2, seed=4))
    run_and_check(*make_case(200, 16, 96, batched=False, seed=5))


def test_natural_lse_and_custom_scale():
    run_and_check(*make_case(256, 16, 64, lse_base2=False, sm_scale=1 / 16, seed=6))


def test_invalid_repeated_and_empty_rows():
    s, skv, g, topk = 160, 200, 1, 128
    gen = torch.Generator(device="cuda").manual_seed(7)
    idx = torch.randint(-3, skv + 40, (1, s, g, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[0, :, 0, 10:20] = idx[0, :, 0, 0:1]        # one key repeated 11 times
    idx[0, 5] = -1                                   # tokens without any key
    idx[0, 77] = -1
    idx[0, 90, 0, :] = torch.arange(300, 300 + topk)  # all out of range
    for causal in (True, False):
        args, kw = make_case(s, 24, topk, skv=skv, causal=causal, indices=idx, seed=8)
        run_and_check(args, kw)


@pytest.mark.parametrize("h", [16, 64])
def test_blocks_without_valid_slots_are_skipped(h, counting):
    # Blocks 1 and 2 of 4 hold no valid slot (-1, negative, >= Skv): the kernel
    # skips them (its count of computed blocks says so), and the blocks
    # around them still count (both pipelines: 2 stages at 32 columns per
    # CTA, 1 at 64).
    s, skv, topk = 96, 300, 256
    gen = torch.Generator(device="cuda").manual_seed(11)
    idx = torch.randint(0, skv, (1, s, 1, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[..., 64:128] = -1
    idx[..., 128:160] = -7
    idx[..., 160:192] = skv + 5
    idx[0, 40, 0, 130] = 17                          # one valid slot: block 2 runs
    args, kw = make_case(s, h, topk, skv=skv, causal=False, indices=idx, seed=12,
                         token_tile=1)
    run_and_check(args, kw)
    stats = {}
    sparse_mla.sparse_mla_bwd(*args, **kw, stats=stats)
    want = torch.full((s,), 2, dtype=torch.int32)   # one CTA per token
    want[40] = 3
    assert stats["tile_tokens"] == 1
    assert torch.equal(stats["blocks"].cpu(), want)


# Token tiles: a CTA works over the union of the keys of T adjacent tokens,
# each (key, token) pair weighted by its multiplicity.

@pytest.mark.parametrize("token_tile", [2, 4])
def test_token_tiles_with_a_partial_last_tile(token_tile):
    # topk = 130: rows of indices that are not 16-byte aligned.
    run_and_check(*make_case(61, 16, 130, seed=20 + token_tile, token_tile=token_tile))


def test_token_tiles_of_disjoint_keys(counting):
    # Tokens of a tile share no key: the union is T times a row.
    s, skv, topk = 32, 32 * 64, 64
    idx = torch.arange(s * topk, device="cuda", dtype=torch.int32).view(1, s, 1, topk)
    args, kw = make_case(s, 16, topk, skv=skv, causal=False, indices=idx, seed=21,
                         token_tile=4)
    run_and_check(args, kw)
    stats = {}
    sparse_mla.sparse_mla_bwd(*args, **kw, stats=stats)
    assert torch.equal(stats["blocks"].cpu(), torch.full((8,), 4, dtype=torch.int32))


def test_token_tiles_gather_shared_keys_once(counting):
    # 64 tokens with the same 128 keys: 16 tiles of 4 compute 2 blocks each,
    # where 64 tokens one by one compute 2 blocks each.
    s, skv, topk = 64, 500, 128
    idx = torch.randperm(skv, device="cuda")[:topk].int().repeat(1, s, 1, 1)
    args, kw = make_case(s, 16, topk, skv=skv, causal=False, indices=idx, seed=29)
    run_and_check(args, kw)
    for tile, blocks in ((None, 16 * 2), (1, 64 * 2)):
        stats = {}
        sparse_mla.sparse_mla_bwd(*args, **dict(kw, token_tile=tile), stats=stats)
        assert stats["tile_tokens"] == (4 if tile is None else 1)
        assert int(stats["blocks"].sum()) == blocks


def test_token_tiles_with_empty_and_repeated_rows():
    s, skv, topk = 40, 96, 128
    gen = torch.Generator(device="cuda").manual_seed(22)
    idx = torch.randint(0, skv, (1, s, 1, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[0, 5] = -1                                  # a token without keys, in a tile
    idx[0, 9, 0, 3:40] = idx[0, 9, 0, 2]            # one key repeated within a row
    idx[0, 10] = idx[0, 9]                          # ... and across the rows of a tile
    idx[0, 11, 0, :64] = idx[0, 8, 0, 64:]
    for causal in (True, False):
        run_and_check(*make_case(s, 8, topk, skv=skv, causal=causal, indices=idx, seed=23,
                                 token_tile=8))


def test_token_tiles_with_keys_in_the_future_of_some_tokens():
    # Each tile's tokens all pick the keys 0 .. s_last of the tile: key s0 + 2
    # is in the future of tokens s0 and s0 + 1 and not of s0 + 2 and s0 + 3.
    s, topk = 48, 48
    idx = torch.arange(topk, device="cuda", dtype=torch.int32).repeat(s, 1)
    idx = torch.where(idx < (torch.arange(s, device="cuda") // 4 * 4 + 4)[:, None], idx,
                      torch.full_like(idx, -1)).view(1, s, 1, topk)
    run_and_check(*make_case(s, 16, topk, indices=idx, seed=24, token_tile=4))


def test_token_tiles_over_two_kv_groups():
    run_and_check(*make_case(90, 32, 128, g=2, seed=25, token_tile=4))


def test_token_tiles_in_batched_and_unbatched_input():
    # S = 50 is not a multiple of 4: a tile ends with each batch row.
    run_and_check(*make_case(50, 16, 96, b=3, seed=26, token_tile=4))
    run_and_check(*make_case(50, 16, 96, batched=False, seed=27, token_tile=4))


def test_token_tiles_match_per_token_results():
    # The same gradients as per token, up to the order of fp32 additions.
    args, kw = make_case(256, 16, 256, seed=28)
    dq1, dkv1 = sparse_mla.sparse_mla_bwd(*args, **dict(kw, token_tile=1),
                                          dkv_dtype=torch.float32)
    dq4, dkv4 = sparse_mla.sparse_mla_bwd(*args, **dict(kw, token_tile=4),
                                          dkv_dtype=torch.float32)
    check("dq of tiles against per token", dq4, dq1)
    check("dkv of tiles against per token", dkv4, dkv1)


def test_dkv_float32_and_custom_op():
    args, kw = make_case(256, 16, 64, seed=9)
    dq, dkv32 = sparse_mla.sparse_mla_bwd(*args, **kw, dkv_dtype=torch.float32)
    assert dkv32.dtype == torch.float32
    _, ref_dkv = reference(args, kw)
    check("dkv fp32", dkv32, ref_dkv)
    # The custom op (what torch.compile traces) gives the same gradients; the
    # order of the fp32 atomics varies, so dkv only up to rounding.
    dq2, dkv2, d_sink = torch.ops.sparse_mla.bwd(*args, 576 ** -0.5, True, True)
    assert d_sink.shape == (0,)
    torch.testing.assert_close(dq2, dq, rtol=0, atol=0)
    check("dkv of the custom op", dkv2, ref_dkv)


def test_autograd_function():
    args, kw = make_case(128, 16, 64, seed=10)
    q, kv, _, do, idx, _ = args
    q = q.clone().requires_grad_()
    kv = kv.clone().requires_grad_()

    def forward(q, kv, indices, sm_scale, is_causal):
        return sparse_mla_fwd_reference(q.detach(), kv.detach(), indices, sm_scale, is_causal)

    o, lse = sparse_mla.SparseMLA.apply(q, kv, idx, forward)
    o.backward(do)
    ref_dq, ref_dkv = sparse_mla_bwd_reference(q.detach(), kv.detach(), o.detach(), do, idx,
                                               lse)
    check("q.grad", q.grad, ref_dq)
    check("kv.grad", kv.grad, ref_dkv)
