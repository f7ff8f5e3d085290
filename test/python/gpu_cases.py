"""Cases of the GPU tests: fresh random inputs whose o and lse come from the
float64 forward (with the same topk_length, attn_sink and q_offset), the
float64 reference gradients, and outputs poisoned with NaN."""
import torch
import torch.nn.functional as F

import sparse_mla
from sparse_mla.reference import (causal_indices, sparse_mla_bwd_reference,
                                  sparse_mla_fwd_reference)

# Arguments of sparse_mla_bwd that change how, not what, it computes.
HOW = ("token_tile", "deterministic", "stats", "dq_out", "dkv_out", "accumulate", "workspace",
       "dkv_dtype", "key_ranges")


def poison_allocator(nbytes):
    """Leaves NaNs in the caching allocator's free blocks, so that outputs
    the kernels fail to write show up."""
    torch.full((nbytes // 4 + 1,), float("nan"), device="cuda")
    torch.cuda.synchronize()


def make_inputs(s, h, topk, b=1, g=1, skv=None, d_v=512, d_tail=64, causal=True, seed=0,
                indices=None):
    """Fresh random q, kv and (causal or uniform) indices, and the generator
    that drew them."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    skv = s if skv is None else skv
    dqk = d_v + d_tail
    q = torch.randn(b, s, h, dqk, device="cuda", generator=gen).bfloat16()
    kv = torch.randn(b, skv, g, dqk, device="cuda", generator=gen).bfloat16()
    if indices is None:
        if causal:
            indices = causal_indices(b, s, g, topk, skv, generator=gen)
        else:
            indices = torch.randint(0, skv, (b, s, g, topk), device="cuda", generator=gen,
                                    dtype=torch.int32)
    return q, kv, indices, gen


def make_case(s, h, topk, b=1, g=1, skv=None, d_v=512, d_tail=64, causal=True,
              batched=True, lse_base2=True, sm_scale=None, seed=0, indices=None,
              token_tile=None, topk_length=None, attn_sink=None, q_offset=0):
    q, kv, indices, gen = make_inputs(s, h, topk, b, g, skv, d_v, d_tail, causal, seed, indices)
    extras = {k: v for k, v in dict(topk_length=topk_length, attn_sink=attn_sink).items()
              if v is not None}
    if q_offset:
        extras["q_offset"] = q_offset
    o, lse = sparse_mla_fwd_reference(q, kv, indices, sm_scale, causal, d_v, lse_base2,
                                      **extras)
    do = torch.randn(o.shape, device="cuda", generator=gen).bfloat16()
    args = [q, kv, o, do, indices, lse]
    if not batched:
        args = [t[0] for t in args]
        if topk_length is not None:
            extras["topk_length"] = topk_length[0]
    return args, dict(sm_scale=sm_scale, is_causal=causal, lse_base2=lse_base2,
                      token_tile=token_tile, **extras)


def check(name, out, ref):
    assert not torch.isnan(out).any(), f"{name} has NaNs (unwritten or invalid)"
    out, ref = out.double(), ref.double()
    if ref.norm() == 0:
        assert out.abs().max() == 0, f"{name} must be zero"
        return
    cos = F.cosine_similarity(out.flatten(), ref.flatten(), dim=0).item()
    rel = ((out - ref).norm() / ref.norm()).item()
    # bf16 outputs round each element by up to 2^-9 relative (and P, dS are
    # bf16 GEMM operands): a relative L2 error of a few 1e-3.
    assert cos >= 0.99999 and rel <= 8e-3, f"{name}: cosine {cos:.7f}, rel L2 {rel:.2e}"


def reference(args, kw):
    """The float64 gradients: (dq, dkv) or, with a sink, (dq, dkv, d_sink)."""
    return sparse_mla_bwd_reference(*args, **{k: v for k, v in kw.items() if k not in HOW})


def run_and_check(args, kw):
    """Runs sparse_mla_bwd on poisoned memory and checks every gradient
    against the reference; returns what it gave."""
    q, kv = args[0], args[1]
    ref = reference(args, kw)
    poison_allocator(4 * (q.numel() + 3 * kv.numel()))
    out = sparse_mla.sparse_mla_bwd(*args, **kw)
    torch.cuda.synchronize()
    assert len(out) == len(ref)
    dq, dkv = out[0], out[1]
    assert dq.shape == q.shape and dq.dtype == torch.bfloat16
    assert dkv.shape == kv.shape
    for name, got, want in zip(("dq", "dkv", "d_sink"), out, ref):
        check(name, got, want)
    return out


def assert_allocates_nothing(fn):
    """Runs fn twice (the first loads the kernels) and checks that the
    second allocated no device memory, not even for a moment."""
    fn()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() == before


def assert_graph_replays(call, outputs):
    """Runs `call` once on a side stream (loading the kernels: no capture
    may), captures it in a CUDA graph, poisons `outputs` with NaN and
    replays: they must come back bit for bit."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    want = [t.clone() for t in outputs]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    for t in outputs:
        t.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    for got, exp in zip(outputs, want):
        assert torch.equal(got, exp)
