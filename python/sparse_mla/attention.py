"""Sparse MLA as one differentiable call: the forward (fwd.py) and the
backward (bwd.py) under one contract, through their custom ops (opcheck,
torch.compile fullgraph, CUDA graphs; the KL target is a plain call beside
them). ``SparseMLA`` takes any forward that returns (o, lse); ``sparse_mla``
is it with ours."""
import functools

import torch

from . import checks
from .bwd import bwd_op
from .fwd import fwd_op, sparse_mla_kl_target


class SparseMLA(torch.autograd.Function):
    """Sparse MLA with this backward, for a forward that returns (o, lse):
    ``o, lse = SparseMLA.apply(q, kv, indices, forward, sm_scale, is_causal,
    lse_base2, topk_length, attn_sink, q_offset, deterministic)`` where
    ``forward(q, kv, indices, sm_scale, is_causal, **extras)`` gives o
    [.., S, H, D] bf16 and lse [.., S, H] float32 (base 2 unless lse_base2
    is False, over the keys only); extras holds topk_length, attn_sink and
    q_offset where they are given. attn_sink gets its gradient; lse is not
    differentiable."""

    @staticmethod
    def forward(ctx, q, kv, indices, forward, sm_scale=None, is_causal=True, lse_base2=True,
                topk_length=None, attn_sink=None, q_offset=0, deterministic=False):
        checks.options(is_causal=is_causal, lse_base2=lse_base2, deterministic=deterministic)
        sm_scale = q.shape[-1] ** -0.5 if sm_scale is None else float(sm_scale)
        extras = {k: v for k, v in dict(topk_length=topk_length, attn_sink=attn_sink,
                                        q_offset=q_offset or None).items() if v is not None}
        o, lse = forward(q, kv, indices, sm_scale, is_causal, **extras)
        ctx.save_for_backward(q, kv, o, indices, lse, topk_length, attn_sink)
        ctx.options = (sm_scale, is_causal, lse_base2, q_offset, deterministic)
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, do, _dlse):
        q, kv, o, indices, lse, topk_length, attn_sink = ctx.saved_tensors
        sm_scale, is_causal, lse_base2, q_offset, deterministic = ctx.options
        dq, dkv, d_sink = bwd_op(q, kv, o, do.contiguous(), indices, lse, sm_scale, is_causal,
                                 lse_base2, topk_length, attn_sink, q_offset, deterministic)
        return (dq, dkv, None, None, None, None, None, None,
                d_sink if attn_sink is not None else None, None, None)


def _forward(d_v, lse_base2, q, kv, indices, sm_scale, is_causal, topk_length=None,
             attn_sink=None, q_offset=None):
    return fwd_op(q, kv, indices, sm_scale, is_causal, d_v, lse_base2, topk_length, attn_sink,
                  q_offset or 0)


def sparse_mla(q, kv, indices, sm_scale=None, *, is_causal=True, d_v=512, topk_length=None,
               attn_sink=None, q_offset=0, deterministic=False, lse_base2=True,
               return_lse=False, return_kl_target=False):
    """o [.., S, H, D] of sparse MLA, differentiable in q, kv and attn_sink:
    sparse_mla_fwd forward, sparse_mla_bwd backward. The arguments are
    those of sparse_mla_fwd; ``deterministic`` makes the backward's
    gradients bitwise repeatable (the forward always is), so a whole
    training step repeats bit for bit. ``return_lse`` adds lse (base 2
    unless lse_base2 is False), ``return_kl_target`` the indexer's target
    (sparse_mla_kl_target; not differentiable): o, then lse, then
    kl_target."""
    checks.options(return_lse=return_lse, return_kl_target=return_kl_target)
    o, lse = SparseMLA.apply(q, kv, indices, functools.partial(_forward, d_v, lse_base2),
                             sm_scale, is_causal, lse_base2, topk_length, attn_sink, q_offset,
                             deterministic)
    out = [o] + ([lse] if return_lse else [])
    if return_kl_target:
        sink = attn_sink.detach() if attn_sink is not None else None
        out.append(sparse_mla_kl_target(q.detach(), kv.detach(), indices, lse, sm_scale,
                                        is_causal, d_v, lse_base2, topk_length=topk_length,
                                        attn_sink=sink, q_offset=q_offset))
    return out[0] if len(out) == 1 else tuple(out)
