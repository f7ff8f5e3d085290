"""Probe of the two cases cuDNN-frontend's DSA tests failed on our wrapper
(bench/NOTES.md, "The warp-specialized forward"): is the result wrong, or
read before it is written?

A: H = 128, S_q = 4, topk 1152 and 2048, positive out-of-range indices,
   caller dq/dkv poisoned with NaN, the call on the current stream: NaN in dq
   read right after the call (isnan on the current stream), and again after
   torch.cuda.synchronize(); which (token, head) rows hold NaN.
B: H = 96, S_q = 256, topk 1024, the call on a side stream while the default
   stream sleeps: dkv's largest |value| against the same call on the default
   stream.

    python3 test/gpu/cudnn_suite_probe.py
"""
import torch

from sparse_mla import cudnn
from sparse_mla.reference import sparse_mla_fwd_reference


def inputs(s_q, s_kv, h, topk, d=576, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = (torch.randn(s_q, h, d, device="cuda", generator=g) / 10).bfloat16()
    kv = (torch.randn(s_kv, d, device="cuda", generator=g) / 10).bfloat16()
    dout = (torch.randn(s_q, h, 512, device="cuda", generator=g) / 10).bfloat16()
    sink = torch.linspace(-1.5, 1.5, h, device="cuda")
    idx = torch.stack([torch.randperm(s_kv, device="cuda", generator=g)[:topk]
                       for _ in range(s_q)]).int()
    out, lse = sparse_mla_fwd_reference(q, kv[:, None], idx[:, None], is_causal=False,
                                        lse_base2=False, attn_sink=sink, dtype=torch.float32)
    return q, kv, out, dout, lse, sink, idx


def case_a():
    for topk in (1152, 2048):
        q, kv, out, dout, lse, sink, idx = inputs(4, topk + 64, 128, topk)
        idx[0, 1] = topk + 64
        idx[1, topk // 2 - 1] = torch.iinfo(torch.int32).max
        dq = torch.full_like(q, float("nan"))
        dkv = torch.full_like(kv, float("nan"))
        stream = torch.cuda.current_stream().cuda_stream
        cudnn.sparse_attention_backward_wrapper(q, kv, out, dout, lse, sink, idx, dq=dq,
                                                dkv=dkv, stream=stream)
        before = torch.isnan(dq).any().item()
        torch.cuda.synchronize()
        rows = torch.isnan(dq).any(-1).nonzero().tolist()
        print(f"A topk {topk}: NaN in dq read at once {before}, after synchronize: "
              f"{len(rows)} (token, head) rows {rows[:8]}; NaN in dkv "
              f"{torch.isnan(dkv).any().item()}")


def case_b():
    q, kv, out, dout, lse, sink, idx = inputs(256, 1024, 96, 1024)
    ref = cudnn.sparse_attention_backward_wrapper(q, kv, out, dout, lse, sink, idx)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    torch.cuda._sleep(2_000_000_000)
    r = cudnn.sparse_attention_backward_wrapper(q, kv, out, dout, lse, sink, idx,
                                                stream=side.cuda_stream)
    torch.cuda.synchronize()
    print(f"B: max |dkv| default stream {ref['dkv'].abs().max().item():.3e}, side stream "
          f"{r['dkv'].abs().max().item():.3e}; dq equal {torch.equal(ref['dq'], r['dq'])}")


if __name__ == "__main__":
    case_a()
    case_b()
