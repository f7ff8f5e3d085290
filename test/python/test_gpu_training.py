"""What training frameworks pass to a DSA backward, on a GPU against the
float64 reference (fresh random inputs, NaN-poisoned outputs): topk_length,
attention sinks, query offsets, the deterministic mode and bitwise repeats,
caller-owned outputs and workspaces, strided inputs, packed variable-length
batches, and the custom ops under opcheck, torch.compile and CUDA graphs."""

import pytest
import torch

import sparse_mla
from gpu_cases import (assert_allocates_nothing, assert_graph_replays, check, make_case,
                       reference, run_and_check)
from sparse_mla.reference import causal_indices

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def random_lengths(shape, topk, gen):
    """Lengths below 0, 0, inside, topk and beyond topk."""
    lengths = torch.randint(-4, topk + 20, shape, device="cuda", generator=gen,
                            dtype=torch.int32)
    flat = lengths.view(-1, *shape[2:]) if len(shape) > 2 else lengths.view(-1)
    flat[0], flat[1], flat[2], flat[3] = -7, 0, topk, topk + 100
    return lengths


@pytest.mark.parametrize("per_group", [False, True])
@pytest.mark.parametrize("token_tile", [None, 1])
def test_topk_length_ignores_the_slots_past_it(per_group, token_tile):
    # Slots past a row's length point at a NaN row of kv: never read, so
    # nothing changes, and that row's gradient stays 0.
    s, h, g, topk, skv = 96, 32, 2, 192, 300
    gen = torch.Generator(device="cuda").manual_seed(40 + per_group)
    idx = torch.randint(0, skv - 1, (1, s, g, topk), device="cuda", generator=gen,
                        dtype=torch.int32)
    idx[..., 5:9] = idx[..., 0:1]                      # repeats inside the rows
    lengths = random_lengths((1, s, g) if per_group else (1, s), topk, gen)
    per_row = lengths if per_group else lengths.unsqueeze(-1).expand(1, s, g)
    past = torch.arange(topk, device="cuda") >= per_row.clamp(0, topk).unsqueeze(-1)
    idx = torch.where(past, torch.full_like(idx, skv - 1), idx)
    args, kw = make_case(s, h, topk, g=g, skv=skv, causal=False, indices=idx, seed=41,
                         token_tile=token_tile, topk_length=lengths)
    args[1][:, skv - 1] = float("nan")
    _, dkv = run_and_check(args, kw)
    assert dkv[:, skv - 1].abs().max() == 0


def test_topk_length_of_zero_everywhere_gives_zero_gradients():
    args, kw = make_case(64, 16, 64, seed=42,
                         topk_length=torch.zeros(1, 64, dtype=torch.int32, device="cuda"))
    dq, dkv = sparse_mla.sparse_mla_bwd(*args, **kw)
    assert dq.abs().max() == 0 and dkv.abs().max() == 0


def test_topk_length_unbatched():
    gen = torch.Generator(device="cuda").manual_seed(43)
    lengths = random_lengths((1, 80), 100, gen)
    run_and_check(*make_case(80, 16, 100, batched=False, seed=43, topk_length=lengths))


@pytest.mark.parametrize("token_tile", [None, 1])
@pytest.mark.parametrize("lse_base2", [True, False])
def test_attention_sink_and_its_gradient(token_tile, lse_base2):
    # Random sinks, and the limits: -inf (no sink), a huge finite one, +inf
    # (every other gradient of that head is 0).
    h = 16
    gen = torch.Generator(device="cuda").manual_seed(44)
    sink = torch.randn(h, device="cuda", generator=gen) * 2
    sink[0], sink[1], sink[2] = float("-inf"), 2e38, float("inf")
    args, kw = make_case(128, h, 128, seed=45, token_tile=token_tile, lse_base2=lse_base2,
                         attn_sink=sink)
    dq, dkv, d_sink = run_and_check(args, kw)
    assert d_sink.shape == (h,) and d_sink.dtype == torch.float32
    assert d_sink[0] == 0                               # no sink, no gradient
    assert dq[..., 1:3, :].abs().max() == 0             # all the mass in the sink


def test_attention_sink_of_minus_infinity_changes_nothing():
    args, kw = make_case(100, 64, 128, seed=46)
    sink = torch.full((64,), float("-inf"), device="cuda")
    dq, dkv, d_sink = sparse_mla.sparse_mla_bwd(*args, **kw, attn_sink=sink, deterministic=True)
    dq0, dkv0 = sparse_mla.sparse_mla_bwd(*args, **kw, deterministic=True)
    assert torch.equal(dq, dq0) and torch.equal(dkv, dkv0)
    assert d_sink.abs().max() == 0


@pytest.mark.parametrize("token_tile", [None, 1])
def test_query_offset_for_a_rank_at_the_tail(token_tile):
    # 96 queries at positions 400 .. 495 of 512 keys: a context-parallel rank.
    s, skv, offset, topk = 96, 512, 400, 256
    gen = torch.Generator(device="cuda").manual_seed(47)
    full = causal_indices(1, offset + s, 1, topk, skv, generator=gen)
    idx = full[:, offset:].contiguous()
    idx[0, :, 0, 7] = offset + torch.arange(s, device="cuda", dtype=torch.int32) + 1  # future
    run_and_check(*make_case(s, 16, topk, skv=skv, indices=idx, seed=48,
                             token_tile=token_tile, q_offset=offset))


@pytest.mark.parametrize("offset", [-300, -1])
def test_query_offsets_that_leave_no_valid_key(offset):
    # Every query is before every key it picked: no gradient at all.
    s = 64
    idx = torch.arange(s, device="cuda", dtype=torch.int32).view(1, s, 1, 1).repeat(1, 1, 1, 8)
    idx = (idx + 300 if offset == -300 else idx - offset).clamp(max=s - 1)
    args, kw = make_case(s, 16, 8, indices=idx, seed=49, q_offset=offset)
    dq, dkv = sparse_mla.sparse_mla_bwd(*args, **kw)
    assert dq.abs().max() == 0 and dkv.abs().max() == 0


@pytest.mark.parametrize("h,token_tile", [(8, None), (16, None), (32, None), (16, 1), (64, None),
                                          (128, None)])
def test_deterministic_mode_matches_the_reference(h, token_tile):
    sink = torch.linspace(-2, 2, h, device="cuda")
    args, kw = make_case(256, h, 256, seed=50 + h, token_tile=token_tile, attn_sink=sink)
    out = run_and_check(args, kw)
    det = run_and_check(args, dict(kw, deterministic=True, dkv_dtype=torch.float32))
    check("dkv (fixed point) against the default", det[1], out[1])
    assert torch.equal(det[0], out[0]) and torch.equal(det[2], out[2])


@pytest.mark.parametrize("h,token_tile", [(16, None), (16, 1), (64, None)])
@pytest.mark.parametrize("bad", ["nan", "huge"])
def test_deterministic_mode_makes_rows_it_cannot_hold_nan(h, token_tile, bad):
    # One token's dO is NaN, or so large that its share of its keys' dKV
    # rows (about 1e9) cannot be held in 64-bit fixed point of 2^-40: those
    # rows come out NaN, as a float sum with such a value would be, and the
    # others as in the default mode.
    args, kw = make_case(256, h, 256, seed=70 + h, token_tile=token_tile)
    do = args[3].clone()
    do[0, 200] = float("nan") if bad == "nan" else do[0, 200].float() * 1e12
    args[3] = do
    dq, dkv = sparse_mla.sparse_mla_bwd(*args, **kw, dkv_dtype=torch.float32)
    det_dq, det_dkv = sparse_mla.sparse_mla_bwd(*args, **kw, deterministic=True,
                                                dkv_dtype=torch.float32)
    assert torch.equal(det_dq.isnan(), dq.isnan())
    expect = dkv.isnan().any(-1) if bad == "nan" else dkv.abs().amax(-1) >= 2.0 ** 23
    lost = det_dkv.isnan().any(-1)
    assert 0 < int(expect.sum()) < expect.numel() and torch.equal(lost, expect)
    assert det_dkv[lost].isnan().all(), "a flagged row is NaN throughout"
    check("dkv of the other rows against the default", det_dkv[~lost], dkv[~lost])


def repeated_key_indices(s, topk, skv, gen):
    """Random keys with many repeats inside rows and across tokens."""
    idx = torch.randint(0, skv, (1, s, 1, topk), device="cuda", generator=gen, dtype=torch.int32)
    idx[..., ::3] = idx[..., 1::3][..., :idx[..., ::3].shape[-1]]
    idx[0, 1::2] = idx[0, 0::2][: idx[0, 1::2].shape[0]]
    return idx


@pytest.mark.parametrize("h,token_tile", [(8, None), (16, None), (16, 1), (32, None), (64, None),
                                          (128, None)])
@pytest.mark.parametrize("repeats", [False, True])
def test_twenty_repeats_are_bitwise_equal(h, token_tile, repeats):
    # Default: dq (and d_sink) on every run; deterministic: dkv as well.
    s, topk, skv = 512, 512, 2048
    gen = torch.Generator(device="cuda").manual_seed(60 + h)
    idx = (repeated_key_indices(s, topk, skv, gen) if repeats
           else causal_indices(1, s, 1, topk, skv, generator=gen))
    args, kw = make_case(s, h, topk, skv=skv, causal=not repeats, indices=idx, seed=61,
                         token_tile=token_tile, attn_sink=torch.zeros(h, device="cuda"))
    for det in (False, True):
        first = sparse_mla.sparse_mla_bwd(*args, **kw, deterministic=det)
        for _ in range(19):
            again = sparse_mla.sparse_mla_bwd(*args, **kw, deterministic=det)
            assert torch.equal(again[0], first[0]), "dq differs between runs"
            assert torch.equal(again[2], first[2]), "d_sink differs between runs"
            if det:
                assert torch.equal(again[1], first[1]), "dkv differs between runs"


@pytest.mark.parametrize("dkv_dtype", [torch.float32, torch.bfloat16])
def test_outputs_in_place_accumulating(dkv_dtype):
    # dkv_out holds earlier gradients; two calls add theirs to it.
    args, kw = make_case(128, 16, 128, seed=62)
    q, kv = args[0], args[1]
    ref_dq, ref_dkv = reference(args, kw)
    # Earlier gradients of the same size, so that bf16 rounding of the sum
    # stays near that of the gradient.
    start = (torch.randn(kv.shape, device="cuda") * ref_dkv.std().item()).to(dkv_dtype)
    dkv_out = start.clone()
    dq_out = torch.full_like(q, float("nan"))
    for _ in range(2):
        dq, dkv = sparse_mla.sparse_mla_bwd(*args, **kw, dq_out=dq_out, dkv_out=dkv_out,
                                            accumulate=True)
    assert dq is dq_out and dkv is dkv_out
    check("dq_out", dq_out, ref_dq)
    check("dkv_out - start", dkv_out.double() - start.double(), 2 * ref_dkv)
    # Without accumulate the output is overwritten.
    dkv_out.fill_(float("nan"))
    sparse_mla.sparse_mla_bwd(*args, **kw, dkv_out=dkv_out)
    check("dkv_out", dkv_out, ref_dkv)


def test_strided_outputs():
    args, kw = make_case(64, 16, 64, seed=63)
    q, kv = args[0], args[1]
    ref_dq, ref_dkv, ref_ds = reference(args, dict(kw, attn_sink=torch.zeros(16, device="cuda")))
    dq_big = torch.full((*q.shape[:-1], 640), float("nan"), device="cuda", dtype=torch.bfloat16)
    dkv_big = torch.full((*kv.shape[:-1], 2 * 576), float("nan"), device="cuda")
    ds_big = torch.full((32,), float("nan"), device="cuda")
    dq, dkv, ds = sparse_mla.sparse_mla_bwd(*args, **kw, attn_sink=torch.zeros(16, device="cuda"),
                                            dq_out=dq_big[..., :576], dkv_out=dkv_big[..., ::2],
                                            d_sink_out=ds_big[::2])
    check("dq", dq, ref_dq)
    check("dkv", dkv, ref_dkv)
    check("d_sink", ds, ref_ds)
    assert torch.isnan(dq_big[..., 576:]).all() and torch.isnan(dkv_big[..., 1::2]).all()


def test_a_call_with_outputs_and_workspace_allocates_nothing():
    sink = torch.zeros(16, device="cuda")
    for token_tile in (None, 1):
        args, kw = make_case(256, 16, 256, seed=64, token_tile=token_tile, attn_sink=sink)
        q, kv = args[0], args[1]
        dq, dkv = torch.empty_like(q), torch.empty(kv.shape, device="cuda")
        d_sink = torch.empty(16, device="cuda")
        ws = torch.empty(sparse_mla.workspace_bytes(*args, attn_sink=sink, token_tile=token_tile),
                         dtype=torch.uint8, device="cuda")
        call = dict(kw, dq_out=dq, dkv_out=dkv, d_sink_out=d_sink, workspace=ws)
        assert_allocates_nothing(lambda: sparse_mla.sparse_mla_bwd(*args, **call))
        ref = reference(args, kw)
        for name, got, want in zip(("dq", "dkv", "d_sink"), (dq, dkv, d_sink), ref):
            check(name, got, want)


@pytest.mark.parametrize("tiles_a_launch", [1, 3])
def test_a_small_workspace_runs_more_launches(tiles_a_launch, counting):
    # A workspace with room for the unions of 1 or 3 of the 16 tiles: the
    # same gradients from 16 or 6 launches of the builder and the kernel.
    args, kw = make_case(64, 16, 128, seed=65, token_tile=4)
    size = sparse_mla.workspace_bytes(*args, token_tile=4,
                                      union_bytes=tiles_a_launch * 8 * 4 * 128)
    assert size < sparse_mla.workspace_bytes(*args, token_tile=4)
    ws = torch.empty(size, dtype=torch.uint8, device="cuda")
    ref = reference(args, kw)
    stats = {}
    dq, dkv = sparse_mla.sparse_mla_bwd(*args, **kw, workspace=ws, stats=stats)
    check("dq", dq, ref[0])
    check("dkv", dkv, ref[1])
    assert stats["blocks"].numel() == 16
    assert stats["launches"] == {1: 16, 3: 6}[tiles_a_launch]
    with pytest.raises(ValueError, match="workspace must hold at least"):
        sparse_mla.sparse_mla_bwd(*args, **kw, workspace=ws[:size // 2])


def test_row_views_are_read_and_written_in_place():
    # q, kv and do sliced from wider (fused) matrices, dq_out and dkv_out
    # views of wider buffers: the kernels take their row strides, so with a
    # workspace nothing is copied or allocated, and the gradients are those
    # of contiguous tensors, bitwise (deterministic mode).
    args, kw = make_case(128, 16, 128, seed=72)
    q, kv, o, do, idx, lse = args

    def wider(t, extra, at):
        big = torch.randn(*t.shape[:-1], t.shape[-1] + extra, device="cuda").to(t.dtype)
        big[..., at:at + t.shape[-1]] = t
        return big[..., at:at + t.shape[-1]]

    views = [wider(q, 64, 32), wider(kv, 64, 64), wider(o, 64, 0), wider(do, 128, 64), idx, lse]
    assert not any(v.is_contiguous() for v in views[:4])
    dq_big = torch.full((*q.shape[:-1], 640), float("nan"), device="cuda", dtype=torch.bfloat16)
    dkv_big = torch.full((*kv.shape[:-1], 640), float("nan"), device="cuda")
    dq_out, dkv_out = dq_big[..., 64:], dkv_big[..., :576]
    ws = torch.empty(sparse_mla.workspace_bytes(*views, deterministic=True), dtype=torch.uint8,
                     device="cuda")
    call = dict(kw, deterministic=True, dq_out=dq_out, dkv_out=dkv_out, workspace=ws)
    assert_allocates_nothing(lambda: sparse_mla.sparse_mla_bwd(*views, **call))
    dq, dkv = sparse_mla.sparse_mla_bwd(*args, **kw, deterministic=True, dkv_dtype=torch.float32)
    assert torch.equal(dq_out, dq) and torch.equal(dkv_out, dkv)
    assert torch.isnan(dq_big[..., :64]).all() and torch.isnan(dkv_big[..., 576:]).all()


def test_strided_inputs_give_the_same_gradients():
    # q sliced from a fused projection (read in place), do and o transposed
    # views (rows not one stride apart: copied).
    args, kw = make_case(128, 16, 128, seed=66)
    q, kv, o, do, idx, lse = args
    fused = torch.randn(*q.shape[:-1], 576 + 128, device="cuda").bfloat16()
    fused[..., 64:640] = q
    q_view = fused[..., 64:640]
    do_t = do.transpose(1, 2).contiguous().transpose(1, 2)
    o_t = o.transpose(1, 2).contiguous().transpose(1, 2)
    assert not q_view.is_contiguous() and not do_t.is_contiguous()
    dq, dkv = sparse_mla.sparse_mla_bwd(q_view, kv, o_t, do_t, idx, lse, **kw,
                                        deterministic=True)
    dq0, dkv0 = sparse_mla.sparse_mla_bwd(*args, **kw, deterministic=True)
    assert torch.equal(dq, dq0) and torch.equal(dkv, dkv0)


def test_packed_variable_length_batch():
    # THD: sequences of 37, 100, 64 and 9 tokens packed into one unbatched
    # row; each token picks keys of its own sequence at or before it, so the
    # packing lives in the indices (is_causal=False). Token tiles of 4 cross
    # the sequences' boundaries.
    lengths = [37, 100, 64, 9]
    total, topk = sum(lengths), 48
    gen = torch.Generator(device="cuda").manual_seed(67)
    idx = torch.full((total, 1, topk), -1, dtype=torch.int32, device="cuda")
    start = 0
    for n in lengths:
        for t in range(n):
            k = min(t + 1, topk)
            idx[start + t, 0, :k] = start + torch.randperm(t + 1, device="cuda",
                                                           generator=gen)[:k].int()
        start += n
    for token_tile in (None, 1):
        args, kw = make_case(total, 16, topk, causal=False, indices=idx.unsqueeze(0), seed=68,
                             batched=False, token_tile=token_tile)
        stats = {}
        dq, dkv = run_and_check(args, kw)
        sparse_mla.sparse_mla_bwd(*args, **kw, stats=stats)
        assert stats["tile_tokens"] == (4 if token_tile is None else 1)
        # Each sequence alone gives the same gradients.
        start = 0
        for n in lengths:
            q, kv, o, do, i, lse = args
            part = [q[start:start + n], kv[start:start + n], o[start:start + n],
                    do[start:start + n], (i[start:start + n] - start).clamp(min=-1),
                    lse[start:start + n]]
            pdq, pdkv = sparse_mla.sparse_mla_bwd(*part, **kw)
            check("dq of one sequence", pdq, dq[start:start + n].double())
            check("dkv of one sequence", pdkv, dkv[start:start + n].double())
            start += n


def opcheck_args(h=16):
    args, kw = make_case(64, h, 64, seed=70, topk_length=torch.full((1, 64), 50,
                                                                    dtype=torch.int32,
                                                                    device="cuda"))
    sink = torch.linspace(-1, 1, h, device="cuda")
    return args, (576 ** -0.5, True, True, kw["topk_length"], sink, 3, True)


def test_opcheck_of_the_custom_ops():
    args, extra = opcheck_args()
    torch.library.opcheck(torch.ops.sparse_mla.bwd.default, (*args, *extra))
    q, kv = args[0], args[1]
    ws = torch.empty(sparse_mla.workspace_bytes(*args, attn_sink=extra[4], deterministic=True),
                     dtype=torch.uint8, device="cuda")
    outs = (torch.empty_like(q), torch.zeros(kv.shape, device="cuda"), ws)
    for d_sink_out in (None, torch.empty(q.shape[-2], device="cuda")):
        into = (*args, *extra[:3], *outs, d_sink_out, True, *extra[3:])
        torch.library.opcheck(torch.ops.sparse_mla.bwd_into.default, into)


def test_torch_compile_fullgraph_matches_eager():
    args, extra = opcheck_args()

    def step(q, kv, o, do, idx, lse, lengths, sink):
        dq, dkv, d_sink = torch.ops.sparse_mla.bwd(q, kv, o, do, idx, lse, extra[0], True, True,
                                                   lengths, sink, 3, True)
        return dq * 2, dkv, d_sink + 1

    eager = step(*args, extra[3], extra[4])
    compiled = torch.compile(step, fullgraph=True)(*args, extra[3], extra[4])
    for a, b in zip(eager, compiled):
        assert torch.equal(a, b)


def test_autograd_function_with_sink_and_lengths():
    h = 16
    sink = torch.linspace(-1, 1, h, device="cuda").requires_grad_()
    lengths = torch.full((1, 96), 70, dtype=torch.int32, device="cuda")
    args, kw = make_case(96, h, 96, seed=71, attn_sink=sink.detach(), topk_length=lengths,
                         q_offset=5)
    q, kv, _, do, idx, _ = args
    q = q.clone().requires_grad_()
    kv = kv.clone().requires_grad_()

    def forward(q, kv, indices, sm_scale, is_causal, **extras):
        from sparse_mla.reference import sparse_mla_fwd_reference
        extras = {k: (v.detach() if isinstance(v, torch.Tensor) else v)
                  for k, v in extras.items()}
        return sparse_mla_fwd_reference(q.detach(), kv.detach(), indices, sm_scale, is_causal,
                                        **extras)

    o, lse = sparse_mla.SparseMLA.apply(q, kv, idx, forward, None, True, True, lengths, sink, 5)
    o.backward(do)
    ref = reference([q.detach(), kv.detach(), o.detach(), do, idx, lse],
                    dict(kw, attn_sink=sink.detach()))
    check("q.grad", q.grad, ref[0])
    check("kv.grad", kv.grad, ref[1])
    check("sink.grad", sink.grad, ref[2])


def test_cuda_graph_replays_the_call():
    args, extra = opcheck_args()
    q, kv = args[0], args[1]
    sink = extra[4]
    dq, dkv, d_sink = torch.empty_like(q), torch.empty(kv.shape, device="cuda"), \
        torch.empty(16, device="cuda")
    ws = torch.empty(sparse_mla.workspace_bytes(*args, attn_sink=sink, deterministic=True),
                     dtype=torch.uint8, device="cuda")
    call = dict(sm_scale=extra[0], topk_length=extra[3], attn_sink=sink, q_offset=3,
                deterministic=True, dq_out=dq, dkv_out=dkv, d_sink_out=d_sink, workspace=ws)
    assert_graph_replays(lambda: sparse_mla.sparse_mla_bwd(*args, **call), (dq, dkv, d_sink))
