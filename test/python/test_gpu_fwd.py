"""The sparse-MLA forward on a GPU against the float64 reference, on fresh
random inputs with NaN-poisoned outputs; the differentiable sparse_mla
against float64 autograd; bitwise repeats; the custom op under opcheck,
torch.compile and CUDA graphs."""
import pytest
import torch

import sparse_mla
from dense import dense_attention
from gpu_cases import assert_graph_replays, check, make_inputs, poison_allocator
from sparse_mla.reference import LN2, sparse_mla_fwd_reference

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# Arguments of sparse_mla_fwd that the reference does not take.
_HOW = ("token_tile", "stats", "o_out", "lse_out")


def fwd_case(s, h, topk, b=1, g=1, skv=None, d_tail=64, causal=True, batched=True, seed=0,
             indices=None, **call):
    """[q, kv, indices] (fresh random) and the call's options."""
    q, kv, idx, _ = make_inputs(s, h, topk, b, g, skv, 512, d_tail, causal, seed, indices)
    args = [q, kv, idx] if batched else [q[0], kv[0], idx[0]]
    if not batched and call.get("topk_length") is not None:
        call["topk_length"] = call["topk_length"][0]
    return args, dict(call, is_causal=causal)


def check_lse(got, want):
    """lse: +inf exactly where the reference's is (rows without a valid key),
    else close (fp32 sums of bf16 products)."""
    assert not torch.isnan(got).any(), "lse has NaNs (unwritten)"
    empty = torch.isinf(want)
    assert torch.equal(torch.isinf(got), empty) and (got[empty] > 0).all()
    err = (got[~empty].double() - want[~empty].double()).abs().max().item() if (~empty).any() else 0
    assert err <= 2e-3, f"lse: max abs error {err:.2e}"


def run_and_check(args, kw, d_v=512):
    """sparse_mla_fwd on poisoned memory against the float64 reference;
    returns (o, lse)."""
    q, kv, idx = args
    ref_kw = {k: v for k, v in kw.items() if k not in _HOW}
    want_o, want_lse = sparse_mla_fwd_reference(q, kv, idx, d_v=d_v, dtype=torch.float64,
                                                **ref_kw)
    poison_allocator(4 * (q.numel() + kv.numel()))
    o, lse = sparse_mla.sparse_mla_fwd(q, kv, idx, d_v=d_v, **kw)
    torch.cuda.synchronize()
    assert o.shape == want_o.shape and o.dtype == torch.bfloat16
    assert lse.shape == want_lse.shape and lse.dtype == torch.float32
    check("o", o, want_o)
    check_lse(lse, want_lse)
    return o, lse


@pytest.mark.parametrize("s,h,topk", [(256, 16, 64), (512, 16, 128), (512, 64, 256),
                                      (1024, 64, 512), (2048, 128, 2048)])
def test_parity_cases(s, h, topk):
    run_and_check(*fwd_case(s, h, topk, seed=s + h + topk))


@pytest.mark.parametrize("h", [1, 8, 16, 24, 32, 64, 96, 128])
@pytest.mark.parametrize("topk", [100, 2048])
@pytest.mark.parametrize("token_tile", [None, 1])
def test_heads_and_topk(h, topk, token_tile):
    run_and_check(*fwd_case(128, h, topk, skv=4096 if topk > 1000 else 300, causal=False,
                            seed=h * topk + 1, token_tile=token_tile))


@pytest.mark.parametrize("token_tile", [2, 4, 8])
def test_token_tiles_mask_each_token_to_its_keys(token_tile):
    # Causal: the tokens of a tile see different keys; 8 heads fill 16-64 columns.
    run_and_check(*fwd_case(200, 8, 128, seed=20 + token_tile, token_tile=token_tile))


def test_two_kv_groups_no_rope_tail_and_unbatched():
    run_and_check(*fwd_case(300, 32, 128, g=2, seed=21))
    run_and_check(*fwd_case(300, 16, 128, d_tail=0, seed=22))
    run_and_check(*fwd_case(200, 16, 96, b=2, seed=23))
    run_and_check(*fwd_case(200, 16, 96, batched=False, seed=24))


def test_natural_lse_and_custom_scale():
    args, kw = fwd_case(256, 16, 64, lse_base2=False, sm_scale=1 / 16, seed=25)
    _, lse = run_and_check(args, kw)
    _, lse2 = sparse_mla.sparse_mla_fwd(*args, sm_scale=1 / 16)
    assert torch.allclose(lse, lse2 * LN2, rtol=1e-5, atol=1e-5)


def test_invalid_repeated_and_empty_rows():
    # Rows without a valid key: o = 0 and lse = +inf, and the backward gives
    # them zero gradients.
    s, skv, topk = 160, 200, 128
    gen = torch.Generator(device="cuda").manual_seed(26)
    idx = torch.randint(-3, skv + 40, (1, s, 1, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[0, :, 0, 10:20] = idx[0, :, 0, 0:1]        # one key repeated 11 times
    idx[0, 5] = -1
    idx[0, 77] = -1
    idx[0, 90, 0, :] = torch.arange(300, 300 + topk)
    for causal in (True, False):
        args, kw = fwd_case(s, 24, topk, skv=skv, causal=causal, indices=idx, seed=27)
        o, lse = run_and_check(args, kw)
        for row in (5, 77, 90):
            assert (o[0, row] == 0).all() and torch.isinf(lse[0, row]).all()
        do = torch.randn_like(o)
        dq, _ = sparse_mla.sparse_mla_bwd(args[0], args[1], o, do, idx, lse, is_causal=causal)
        for row in (5, 77, 90):
            assert (dq[0, row] == 0).all()


@pytest.mark.parametrize("token_tile", [None, 1])
def test_topk_length_sink_and_query_offset(token_tile):
    h = 16
    sink = torch.linspace(-2, 2, h, device="cuda")
    sink[0], sink[1] = float("-inf"), 30.0
    lengths = torch.randint(0, 97, (1, 96), dtype=torch.int32, device="cuda",
                            generator=torch.Generator(device="cuda").manual_seed(28))
    run_and_check(*fwd_case(96, h, 96, skv=300, seed=29, attn_sink=sink, topk_length=lengths,
                            q_offset=200, token_tile=token_tile))


@pytest.mark.parametrize("h,g,extras", [
    (16, 1, {}), (64, 1, dict(sink=True)), (128, 1, dict(lengths=True)), (8, 2, dict(sink=True)),
    (24, 1, dict(offset=True))])
def test_the_kl_target_matches_the_reference(h, g, extras):
    # Per slot of each (token, group): the mean over the group's heads of P,
    # the sink in its denominator; invalid, repeated and ignored slots.
    s, skv, topk = 96, 300, 128
    gen = torch.Generator(device="cuda").manual_seed(h + g)
    idx = torch.randint(-2, skv + 3, (1, s, g, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[0, :, :, 5:9] = idx[0, :, :, :1]
    idx[0, 11] = -1
    call = dict(is_causal=False)
    if extras.get("sink"):
        call["attn_sink"] = torch.randn(h, device="cuda", generator=gen)
    if extras.get("lengths"):
        call["topk_length"] = torch.randint(0, topk + 1, (1, s), device="cuda", generator=gen,
                                            dtype=torch.int32)
    if extras.get("offset"):
        call.update(is_causal=True, q_offset=skv - s)
    args, _ = fwd_case(s, h, topk, g=g, skv=skv, indices=idx, seed=h)
    _, _, want = sparse_mla_fwd_reference(*args, return_kl_target=True, **call)
    poison_allocator(1 << 26)
    o, lse, kl = sparse_mla.sparse_mla_fwd(*args, return_kl_target=True, **call)
    assert kl.shape == (1, s, g, topk) and not torch.isnan(kl).any()
    assert (kl[0, 11] == 0).all()
    check("kl_target", kl, want)
    _, _, again = sparse_mla.sparse_mla_fwd(*args, return_kl_target=True, **call)
    assert torch.equal(kl, again)


@pytest.mark.parametrize("h,token_tile", [(16, None), (16, 1), (128, None)])
def test_outputs_are_bitwise_repeatable(h, token_tile):
    args, kw = fwd_case(512, h, 512, seed=30, token_tile=token_tile)
    o, lse = sparse_mla.sparse_mla_fwd(*args, **kw)
    for _ in range(5):
        o2, lse2 = sparse_mla.sparse_mla_fwd(*args, **kw)
        assert torch.equal(o, o2) and torch.equal(lse, lse2)


def test_outputs_in_place():
    args, kw = fwd_case(128, 16, 64, seed=31)
    want_o, want_lse = sparse_mla.sparse_mla_fwd(*args, **kw)
    o_out = torch.full_like(want_o, float("nan"))
    lse_out = torch.full_like(want_lse, float("nan"))
    o, lse = sparse_mla.sparse_mla_fwd(*args, **kw, o_out=o_out, lse_out=lse_out)
    assert o is o_out and lse is lse_out
    assert torch.equal(o, want_o) and torch.equal(lse, want_lse)


@pytest.mark.parametrize("h,deterministic", [(16, False), (64, True)])
def test_sparse_mla_gradients_match_float64_autograd(h, deterministic):
    args, _ = fwd_case(128, h, 128, seed=32)
    q, kv, idx = args
    sink = torch.linspace(-1, 1, h, device="cuda")
    w = torch.randn(128, h, 512, device="cuda", dtype=torch.float64).unsqueeze(0)
    leaves = [t.detach().clone().requires_grad_() for t in (q, kv, sink)]
    o = sparse_mla.sparse_mla(*leaves[:2], idx, attn_sink=leaves[2],
                              deterministic=deterministic)
    (o.double() * w).sum().backward()
    ref = [t.detach().double().requires_grad_() for t in (q, kv, sink)]
    o_ref = dense_attention(ref[0], ref[1], idx, 576 ** -0.5, True, ref[2])
    (o_ref * w).sum().backward()
    check("o", o, o_ref.detach())
    for name, got, want in zip(("q.grad", "kv.grad", "sink.grad"), leaves, ref):
        check(name, got.grad, want.grad)


def test_a_deterministic_training_step_repeats_bitwise():
    args, _ = fwd_case(256, 16, 256, seed=33)
    q, kv, idx = args
    results = []
    for _ in range(3):
        leaves = [t.detach().clone().requires_grad_() for t in (q, kv)]
        o, lse = sparse_mla.sparse_mla(*leaves, idx, deterministic=True, return_lse=True)
        o.float().square().sum().backward()
        results.append([o, lse, leaves[0].grad, leaves[1].grad])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert torch.equal(a, b)


def _op_args():
    args, kw = fwd_case(64, 16, 64, seed=34)
    lengths = torch.full((1, 64), 50, dtype=torch.int32, device="cuda")
    sink = torch.linspace(-1, 1, 16, device="cuda")
    return (*args, 576 ** -0.5, True, 512, True, lengths, sink, 3)


def test_opcheck_of_the_forward_op():
    torch.library.opcheck(torch.ops.sparse_mla.fwd.default, _op_args())


def test_torch_compile_fullgraph_matches_eager():
    q, kv, idx, *_ = _op_args()

    # Elementwise after the op: a reduction's order is inductor's own.
    def step(q, kv, idx):
        o = sparse_mla.sparse_mla(q, kv, idx)
        return o.float() * 2

    eager = step(q, kv, idx)
    compiled = torch.compile(step, fullgraph=True)(q, kv, idx)
    assert torch.equal(eager, compiled)


def test_cuda_graph_replays_the_forward():
    q, kv, idx, *_ = _op_args()
    o = torch.empty(1, 64, 16, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(1, 64, 16, device="cuda")
    assert_graph_replays(lambda: sparse_mla.sparse_mla_fwd(q, kv, idx, o_out=o, lse_out=lse),
                         (o, lse))


def test_the_kl_target_from_any_forwards_lse_and_through_sparse_mla():
    args, _ = fwd_case(128, 16, 128, seed=35)
    sink = torch.linspace(-1, 1, 16, device="cuda")
    _, lse_ref, want = sparse_mla_fwd_reference(*args, attn_sink=sink, lse_base2=False,
                                                return_kl_target=True)
    kl = sparse_mla.sparse_mla_kl_target(*args, lse_ref, attn_sink=sink, lse_base2=False)
    check("kl_target from a natural lse", kl, want)
    leaves = [t.detach().clone().requires_grad_() for t in args[:2]]
    o, lse, kl2 = sparse_mla.sparse_mla(*leaves, args[2], attn_sink=sink, return_lse=True,
                                        return_kl_target=True)
    _, _, kl3 = sparse_mla.sparse_mla_fwd(*args, attn_sink=sink, return_kl_target=True)
    assert torch.equal(kl2, kl3) and not kl2.requires_grad
    o.float().sum().backward()                       # the target takes no part in it
    assert leaves[0].grad is not None
