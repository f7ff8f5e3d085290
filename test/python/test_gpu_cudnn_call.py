"""cuDNN-frontend's DSA backward call (sparse_mla.cudnn) on a GPU against the
float64 reference: its flat MQA layouts, natural lse, index-only masking, sink
and topk_length; its plan object allocating nothing; its stream argument; and
bwd_into's d_sink_out under a CUDA graph."""
import pytest
import torch

import sparse_mla
from gpu_cases import assert_allocates_nothing, assert_graph_replays, check, poison_allocator
from sparse_mla import cudnn
from sparse_mla.reference import sparse_mla_bwd_reference, sparse_mla_fwd_reference

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def cudnn_case(t=256, h=16, t_kv=512, topk=128, d=576, seed=0, lengths=False):
    """cuDNN's inputs (distinct random keys per query, some -1 and >= T_kv),
    o and a natural lse from the float64 forward with the sink."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(t, h, d, device="cuda", generator=gen).bfloat16()
    kv = torch.randn(t_kv, d, device="cuda", generator=gen).bfloat16()
    sink = torch.randn(h, device="cuda", generator=gen)
    idx = torch.stack([torch.randperm(t_kv, device="cuda", generator=gen)[:topk]
                       for _ in range(t)]).int()
    idx[::7, -5:] = -1
    idx[::11, :3] = t_kv + 2
    topk_length = (torch.randint(0, topk + 1, (t,), device="cuda", generator=gen).int()
                   if lengths else None)
    out, lse = sparse_mla_fwd_reference(q, kv[:, None], idx[:, None], is_causal=False,
                                        d_v=512, lse_base2=False, attn_sink=sink,
                                        topk_length=topk_length)
    dout = torch.randn(out.shape, device="cuda", generator=gen).bfloat16()
    return [q, kv, out, dout, lse, sink, idx], topk_length


def reference(args, topk_length):
    q, kv, out, dout, lse, sink, idx = args
    dq, dkv, d_sink = sparse_mla_bwd_reference(q, kv[:, None], out, dout, idx[:, None], lse,
                                               is_causal=False, lse_base2=False,
                                               attn_sink=sink, topk_length=topk_length)
    return dq, dkv[:, 0], d_sink


@pytest.mark.parametrize("h,d,lengths", [(16, 576, False), (64, 576, True), (128, 512, False),
                                         (8, 576, True)])
def test_the_wrapper_matches_the_reference(h, d, lengths):
    args, topk_length = cudnn_case(h=h, d=d, lengths=lengths, seed=h + d)
    want = reference(args, topk_length)
    poison_allocator(1 << 26)
    got = cudnn.sparse_attention_backward_wrapper(*args, topk_length=topk_length)
    assert [id(t) for t in got] == [id(t) for t in got.values()] and len(got) == 3
    assert list(got.keys()) == ["dq", "dkv", "d_sink"]
    assert got["dkv"].shape == args[1].shape and got["dkv"].dtype == torch.bfloat16
    for name, a, b in zip(("dq", "dkv", "d_sink"), got, want):
        check(name, a, b)


def test_the_plan_writes_caller_outputs_and_allocates_nothing():
    args, _ = cudnn_case(seed=3)
    plan = cudnn.SparseAttentionBackward(*args, deterministic=True)
    assert plan.check_support()
    plan.compile()
    ws = torch.empty(plan.scratch_workspace_bytes(), dtype=torch.uint8, device="cuda")
    dq, dkv, d_sink = torch.empty_like(args[0]), torch.empty_like(args[1]), torch.empty(16,
                                                                                       device="cuda")
    stream = torch.cuda.current_stream().cuda_stream      # a raw handle, as cuda.CUstream gives
    run = lambda: plan.execute(*args, dq, dkv, workspace=ws, current_stream=stream,  # noqa: E731
                               d_sink=d_sink)
    assert_allocates_nothing(run)
    first = [t.clone() for t in (dq, dkv, d_sink)]
    result = run()
    assert result[0] is dq and result[1] is dkv and result[2] is d_sink
    for a, b in zip(result, first):
        assert torch.equal(a, b)                         # deterministic: the same bits
    for name, a, b in zip(("dq", "dkv", "d_sink"), result, reference(args, None)):
        check(name, a, b)


def test_the_stream_argument_is_where_it_runs():
    # Deterministic: the default's dkv sums in no fixed order.
    args, _ = cudnn_case(seed=4)
    want = cudnn.sparse_attention_backward_wrapper(*args, deterministic=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    got = cudnn.sparse_attention_backward_wrapper(*args, deterministic=True, stream=side)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    for a, b in zip(got, want):
        assert torch.equal(a, b)


def test_bwd_into_with_d_sink_out_in_a_cuda_graph_allocates_nothing():
    args, _ = cudnn_case(seed=5)
    q, kv, out, dout, lse, sink, idx = args
    ours = (q, kv[:, None], out, dout, idx[:, None], lse)
    dq, dkv, d_sink = torch.empty_like(q), torch.empty(kv[:, None].shape, device="cuda"), \
        torch.empty(16, device="cuda")
    # Deterministic, so that the replay's dkv is the eager call's bit for bit.
    ws = torch.empty(sparse_mla.workspace_bytes(*ours, attn_sink=sink, deterministic=True),
                     dtype=torch.uint8, device="cuda")

    def call():
        return torch.ops.sparse_mla.bwd_into(*ours, 576 ** -0.5, False, False, dq, dkv, ws,
                                             d_sink, attn_sink=sink, deterministic=True)
    assert call().numel() == 0
    assert_allocates_nothing(call)
    assert_graph_replays(call, (dq, dkv, d_sink))
