"""The sparse-MLA forward (kernels/sparse_mla_fwd.mlir): o and lse, every
argument checked (checks.py) before anything is launched, launched as the
plan (plan.py) hands the launches out, with the backward's token tiles and
union builder."""
from typing import Optional

import torch

from . import _runtime, checks, plan
from .checks import LOG2E
from .ops import contiguous, rows_view, stream_of

_LN2 = 1.0 / LOG2E


def sparse_mla_fwd(q, kv, indices, sm_scale=None, is_causal=True, d_v=512, lse_base2=True,
                   token_tile=None, stats=None, *, topk_length=None, attn_sink=None,
                   q_offset=0, o_out=None, lse_out=None, return_kl_target=False):
    """(o, lse) of sparse MLA, like TileLang's ``sparse_mla_fwd``.

    q [B,S,H,D+D_tail] bf16, kv [B,Skv,G,D+D_tail] bf16, indices [B,S,G,topk]
    int32 (the batch dimension may be left out of all of them); o
    [B,S,H,D] bf16 (D = d_v, the first D columns of kv are V) and lse
    [B,S,H] float32, base 2 unless ``lse_base2=False``, over the keys only.
    Invalid indices (negative, >= Skv, in the future of their token when
    causal) contribute nothing and are never read; a row with no valid key
    gets o = 0 and lse = +inf (the backward gives it zero gradients). o and
    lse are the same bits on every call (no atomics).

    ``topk_length``, ``attn_sink`` (o = sum_j exp(s_j - logaddexp(lse,
    sink)) v_j; lse stays over the keys) and ``q_offset`` are those of
    ``sparse_mla_bwd``. ``o_out`` and ``lse_out``: written in place. A dict
    passed as ``stats`` receives "tile_tokens" (T, chosen as for the
    backward unless ``token_tile`` sets it) and "launches".

    ``return_kl_target=True`` returns (o, lse, kl_target): the indexer's
    training target kl_target [B,S,G,topk] float32, for each query token,
    kv group and slot, the mean over the group's heads of the attention
    probability P (the sink in its denominator); invalid and ignored slots
    get 0. A second pass over the scores (kernels/sparse_mla_kl.mlir: the
    S GEMM and the gather again: 0.6-0.8 of a forward on an H100); bitwise
    repeatable."""
    problem = checks.forward_shapes(q, kv, indices, d_v)
    checks.extras(problem, topk_length, attn_sink, q_offset)
    checks.options(token_tile=token_tile, is_causal=is_causal, lse_base2=lse_base2,
                   return_kl_target=return_kl_target)
    checks.stats(stats)
    b, s, h, dqk, skv, g, _, topk, batched = problem
    lead = (b,) if batched else ()
    o_shape, lse_shape = (*lead, s, h, d_v), (*lead, s, h)
    if o_out is not None:
        checks.output("o_out", o_out, q.new_empty(o_shape, device="meta"), (torch.bfloat16,))
    if lse_out is not None:
        checks.output("lse_out", lse_out, q.new_empty(lse_shape, device="meta"),
                      (torch.float32,))
        checks.check_tensor("lse_out", lse_out, torch.float32)
    sm_scale = checks.sm_scale(sm_scale, dqk)
    call = plan.plan(problem, token_tile, family="fwd")
    checks.check_devices(q=q, kv=kv, indices=indices, topk_length=topk_length,
                         attn_sink=attn_sink, o_out=o_out, lse_out=lse_out)
    o = o_out if o_out is not None and rows_view(o_out, copy=False) is not None else \
        torch.empty(o_shape, dtype=torch.bfloat16, device=q.device)
    lse = lse_out if lse_out is not None else \
        torch.empty(lse_shape, dtype=torch.float32, device=q.device)
    launches = _run(call, problem, q, kv, contiguous(indices), contiguous(topk_length),
                    contiguous(attn_sink), o, lse,
                    dict(causal=int(is_causal), q_offset=q_offset, qk_scale=sm_scale * LOG2E,
                         lse_scale=1.0 if lse_base2 else _LN2))
    if stats is not None:
        stats.update(tile_tokens=call.t, launches=launches)
    if o_out is not None and o is not o_out:
        o_out.copy_(o)
        o = o_out
    if not return_kl_target:
        return o, lse
    return o, lse, sparse_mla_kl_target(q, kv, indices, lse, sm_scale, is_causal, d_v,
                                        lse_base2, topk_length=topk_length,
                                        attn_sink=attn_sink, q_offset=q_offset)


def _run(call, problem, q, kv, indices, topk_length, attn_sink, o, lse, options):
    """The launches of a checked call, in order: each window's union builder
    (token tiles) and the forward. Returns the forward's launches."""
    b, s, h, dqk, skv, g, d_v, topk, _ = problem
    tokens = b * s
    if not tokens:
        return 0
    if not b * skv * g:   # no keys: every row is empty
        o.zero_()
        lse.fill_(float("inf"))
        return 0
    device, stream = q.device.index, stream_of(q.device)
    workspace = torch.empty(call.bytes, dtype=torch.uint8, device=q.device)
    lengths = topk_length.view(tokens, -1) if topk_length is not None else None
    tensors = dict(q=rows_view(q), kv=rows_view(kv), sink=attn_sink, o=rows_view(o),
                   lse=lse.view(tokens, h), **options)
    launched = 0
    for union, main in call.launches(call.carve(workspace), indices.view(tokens, g, topk),
                                     lengths, options["causal"], options["q_offset"]):
        if union is not None:
            _runtime.launch(call.union, union, device, stream)
        _runtime.launch(call.name, dict(main, **tensors), device, stream)
        launched += 1
    return launched


def sparse_mla_kl_target(q, kv, indices, lse, sm_scale=None, is_causal=True, d_v=512,
                         lse_base2=True, *, topk_length=None, attn_sink=None, q_offset=0):
    """The DSA indexer's training target from a forward's lse (this
    package's or another's, over the keys only): kl_target [B,S,G,topk]
    float32, per slot the mean over the group's heads of P = exp(s -
    logaddexp(lse, sink)); 0 for invalid and ignored slots. The arguments
    are sparse_mla_fwd's; lse [B,S,H] float32, base 2 unless lse_base2 is
    False. One pass over the scores (kernels/sparse_mla_kl.mlir), bitwise
    repeatable."""
    problem = checks.forward_shapes(q, kv, indices, d_v)
    checks.extras(problem, topk_length, attn_sink, q_offset)
    checks.options(is_causal=is_causal, lse_base2=lse_base2)
    b, s, h, dqk, skv, g, d_v, topk, batched = problem
    lead = (b,) if batched else ()
    checks.check_tensor("lse", lse, torch.float32, contiguous=False)
    if lse.shape != (*lead, s, h):
        raise ValueError(f"lse must have shape {(*lead, s, h)}, got {tuple(lse.shape)}")
    sm_scale = checks.sm_scale(sm_scale, dqk)
    checks.check_devices(q=q, kv=kv, indices=indices, lse=lse, topk_length=topk_length,
                         attn_sink=attn_sink)
    # One row of slot sums per block of heads, added in order and divided
    # by the heads per group.
    tokens, heads = b * s, h // g
    name, per_cta = plan.select_variant(heads, d_v, dqk - d_v, family="kl")
    sums = torch.zeros(-(-heads // per_cta), tokens * g, topk, dtype=torch.float32,
                       device=q.device)
    if tokens and b * skv * g:
        lengths = contiguous(topk_length)
        _runtime.launch(name, dict(
            q=rows_view(q), kv=rows_view(kv), keys=contiguous(indices).view(tokens * g, topk),
            counts=None if lengths is None else lengths.view(tokens, -1),
            lse=contiguous(lse).view(tokens, h), sink=contiguous(attn_sink), kl=sums, batch=b,
            seq_len=s, kv_len=skv, groups=g, heads_per_group=heads, causal=int(is_causal),
            q_offset=q_offset, qk_scale=sm_scale * LOG2E,
            lse_scale=1.0 if lse_base2 else LOG2E), q.device.index, stream_of(q.device))
    return sums.sum(0).div_(heads).view(*lead, s, g, topk)


@torch.library.custom_op("sparse_mla::fwd", mutates_args=())
def _fwd_op(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float,
            is_causal: bool, d_v: int, lse_base2: bool,
            topk_length: Optional[torch.Tensor] = None, attn_sink: Optional[torch.Tensor] = None,
            q_offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    return sparse_mla_fwd(q, kv, indices, sm_scale, is_causal, d_v, lse_base2,
                          topk_length=topk_length, attn_sink=attn_sink, q_offset=q_offset)


@_fwd_op.register_fake
def _(q, kv, indices, sm_scale, is_causal, d_v, lse_base2, topk_length=None, attn_sink=None,
      q_offset=0):
    return q.new_empty((*q.shape[:-1], d_v)), q.new_empty(q.shape[:-1], dtype=torch.float32)


fwd_op = torch.ops.sparse_mla.fwd
