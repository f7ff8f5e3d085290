"""The sparse-MLA backward as a PyTorch drop-in: preprocess (Delta), the
attention sink's kernels, the union builder of token tiles, the main kernel
(kernels/sparse_mla_bwd.mlir) and the postprocess (the dKV workspace ->
bf16 or f32), every argument checked (checks.py) before anything is
launched, and launched as the plan (plan.py) hands the launches out.

Scratch memory comes from one workspace (``workspace_bytes`` sizes it): a
call given ``dq_out``, ``dkv_out`` and ``workspace`` allocates nothing."""
from typing import Optional

import torch

from . import _runtime, checks, plan
from .checks import LOG2E
from .ops import contiguous, delta, postprocess, rows_view, stream_of


def workspace_bytes(q, kv, o, do, indices, lse, *, attn_sink=None, deterministic=False,
                    token_tile=None, union_bytes=plan.UNION_BYTES, key_ranges=None):
    """Bytes of scratch memory that ``sparse_mla_bwd`` with these arguments
    uses: pass a uint8 CUDA tensor of at least this size as ``workspace``
    (with ``dq_out`` and ``dkv_out``) and the call allocates nothing. Only
    the shapes, dtypes and these options matter (tensors on the "meta"
    device will do). ``union_bytes`` bounds the token tiles' union buffers
    (more launches where they are smaller)."""
    problem = checks.shapes(q, kv, o, do, indices, lse)
    checks.extras(problem, None, attn_sink, 0)
    checks.options(deterministic=deterministic, token_tile=token_tile, key_ranges=key_ranges,
                   union_bytes=union_bytes)
    return plan.plan(problem, token_tile, deterministic, attn_sink is not None, union_bytes,
                     key_ranges=key_ranges).bytes


def _buffer(out, make, keep=False):
    """Where a result is computed: the caller's `out` itself where the
    kernels can write it (rows one stride apart), else a new buffer that
    _deliver copies into `out`: `make()`, or with `keep` (accumulate) a
    contiguous copy of `out` that keeps what it holds."""
    if out is not None and rows_view(out, copy=False) is not None:
        return out
    return out.contiguous() if keep and out is not None else make()


def _deliver(result, out):
    """`out` holding `result` (copied there unless computed in place), or
    `result` where the caller gave no `out`."""
    if out is None or result is out:
        return result
    out.copy_(result)
    return out


def sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale=None, is_causal=True,
                   lse_base2=True, dkv_dtype=torch.bfloat16, token_tile=None, stats=None, *,
                   topk_length=None, attn_sink=None, q_offset=0, deterministic=False,
                   dq_out=None, dkv_out=None, d_sink_out=None, accumulate=False,
                   workspace=None, key_ranges=None):
    """Gradients (dq, dkv) of sparse MLA, like TileLang's ``sparse_mla_bwd``;
    (dq, dkv, d_sink) with ``attn_sink``.

    q [B,S,H,D+D_tail] bf16, kv [B,Skv,G,D+D_tail] bf16, o and do [B,S,H,D]
    bf16, indices [B,S,G,topk] int32, lse [B,S,H] float32 (the batch
    dimension may be left out of all of them; packed variable-length
    batches (THD) are one unbatched sequence whose indices point into it).
    lse is base 2 as TileLang's forward returns it, or natural with
    ``lse_base2=False``. Invalid indices (negative, >= Skv, in the future
    of their token when causal) contribute nothing and are never read.
    Views whose rows (the last dimension, contiguous) lie one stride apart
    are read in place, as q sliced from a fused projection; other layouts
    are copied first.

    - ``topk_length`` [B,S] or [B,S,G] int32: slot j of a row is ignored
      when j >= clamp(length, 0, topk), whatever it holds.
    - ``attn_sink`` [H] float32: a per-head logit in the softmax
      denominator, with no value row; lse is over the keys only (P = exp(s
      - logaddexp(lse, sink))). -inf is no sink; +inf makes every other
      gradient 0. Adds d_sink [H] float32 to the result.
    - ``q_offset``: the position of each batch row's first query (context
      parallelism: a rank's chunk of queries at [q_offset, q_offset + S));
      causal masking keeps keys k <= q_offset + s.
    - ``deterministic``: dkv (and d_sink, dq) bitwise the same on every run
      on one GPU and build; dKV is summed in 64-bit fixed point (units of
      2^-fixed_point_bits, a constant of the build: 2^-40; |dkv| < 2^23). A row that a non-finite value
      or one that fixed point cannot hold (|x| >= 2^23) reaches comes out
      NaN throughout. dq and d_sink are reproducible in either mode.
    - ``dq_out`` (bf16, q's shape), ``dkv_out`` (bf16 or float32, kv's
      shape; its dtype is dkv_dtype) and ``d_sink_out`` (float32 [H]):
      written in place (views whose rows lie one stride apart directly,
      other layouts through a copy). ``accumulate=True``
      adds dkv into ``dkv_out``.
    - ``workspace``: a uint8 CUDA tensor of at least ``workspace_bytes``;
      with it and contiguous outputs nothing is allocated.
    - ``key_ranges``: the key-range work order for long contexts (the CTAs
      that run together keep to one range of keys, so that the dKV rows
      they add into stay in L2). None: on where the keys' dKV accumulator
      (fp32, or 64-bit fixed point when deterministic) and kv rows outgrow
      the L2 (``plan.key_range_keys``); False: off; True: on; an
      int: on, with that many keys per range (a power of two). It changes
      the speed, not the result: dq stays bitwise repeatable (with token
      tiles, bitwise the same as without).

    ``token_tile`` (default: chosen by ``plan.tile_tokens``) is the number of
    adjacent tokens that share one gather and scatter of their keys. A dict
    passed as ``stats`` receives "tile_tokens" (T), "range_keys": the keys
    per range of the key-range order (0: off), "launches": the launches of
    the main kernel that the token tiles' union buffers took and, from a
    build that counts them (sparse-mla-bench-to-ptx count-op=tile.gemm; the
    GPU tests'), "blocks": an int32 tensor of the 64-slot blocks each CTA
    of the main kernel computed (those without a valid slot are skipped),
    in launch order."""
    problem = checks.shapes(q, kv, o, do, indices, lse)
    checks.extras(problem, topk_length, attn_sink, q_offset)
    checks.options(deterministic=deterministic, token_tile=token_tile, key_ranges=key_ranges,
                   is_causal=is_causal, lse_base2=lse_base2, accumulate=accumulate)
    checks.stats(stats)
    dkv_dtype = checks.outputs(q, kv, attn_sink, dkv_dtype, dq_out, dkv_out, d_sink_out,
                               accumulate)
    sm_scale = checks.sm_scale(sm_scale, problem.dqk)
    sink = attn_sink is not None
    call = plan.plan(problem, token_tile, deterministic, sink, key_ranges=key_ranges)
    if workspace is not None:
        checks.check_tensor("workspace", workspace, torch.uint8, ndim=1)
        # A smaller workspace than workspace_bytes gives fewer tiles a launch.
        fitted = plan.plan(problem, token_tile, deterministic, sink, fit=workspace.numel(),
                           key_ranges=key_ranges)
        least = plan.plan(problem, token_tile, deterministic, sink, union_bytes=0,
                          key_ranges=key_ranges).bytes
        checks.workspace(workspace, max(least, fitted.bytes), call.bytes)
        call = fitted
    checks.check_devices(q=q, kv=kv, o=o, do=do, indices=indices, lse=lse,
                         topk_length=topk_length, attn_sink=attn_sink, dq_out=dq_out,
                         dkv_out=dkv_out, d_sink_out=d_sink_out, workspace=workspace)
    if workspace is None:
        workspace = torch.empty(call.bytes, dtype=torch.uint8, device=q.device)
    dq = _buffer(dq_out, lambda: torch.empty(q.shape, dtype=q.dtype, device=q.device))
    d_sink = None
    if sink:
        d_sink = _buffer(d_sink_out, lambda: torch.empty(problem.h, dtype=torch.float32,
                                                         device=q.device))
    dkv = _buffer(dkv_out, lambda: torch.empty(kv.shape, dtype=dkv_dtype, device=kv.device),
                  keep=accumulate)
    options = dict(causal=int(is_causal), q_offset=q_offset, qk_scale=sm_scale * LOG2E,
                   lse_scale=1.0 if lse_base2 else LOG2E, sm_scale=sm_scale)
    launched = _run(call, problem, q, kv, o, do, contiguous(indices), contiguous(lse),
                    contiguous(topk_length), contiguous(attn_sink), call.carve(workspace),
                    dq, d_sink, dkv, options, lse_base2, deterministic, accumulate,
                    count=stats is not None)
    if stats is not None:
        stats.update(tile_tokens=call.t, range_keys=call.range_keys, launches=len(launched))
        if call.counting:
            stats["blocks"] = torch.cat(launched) if launched else indices.new_zeros(0)
    dq, dkv = _deliver(dq, dq_out), _deliver(dkv, dkv_out)
    return (dq, dkv) if d_sink is None else (dq, dkv, _deliver(d_sink, d_sink_out))


def _run(call, problem, q, kv, o, do, indices, lse, topk_length, attn_sink, scratch, dq, d_sink,
         dkv, options, lse_base2, deterministic, accumulate, count):
    """The launches of a checked call, in order: Delta, the sink's, each
    window's union builder and main kernel, the postprocess. Returns, per
    launch of the main kernel, its blocks per CTA where a counting build
    counted them (`count`), else None."""
    b, s, h, dqk, skv, g, d_v, topk, _ = problem
    tokens, rows = b * s, b * skv * g
    device, stream = q.device.index, stream_of(q.device)
    ws, lost = scratch["ws"], scratch.get("lost")
    ws.zero_()
    if lost is not None:
        lost.zero_()
    launched = []
    if not tokens:
        if d_sink is not None:
            d_sink.zero_()
    else:
        delta(rows_view(o), rows_view(do), scratch["delta"], device, stream)
        lse_in = lse.view(tokens, h)
        if attn_sink is not None:
            _runtime.launch("sparse_mla_sink",
                            dict(lse=lse_in, delta=scratch["delta"], sink=attn_sink,
                                 lse_out=scratch["lse"], partial=scratch["partial"],
                                 chunk=plan.SINK_CHUNK, to_base2=1.0 if lse_base2 else LOG2E),
                            device, stream)
            _runtime.launch("sparse_mla_sink_sum",
                            dict(partial=scratch["partial"], d_sink=d_sink), device, stream)
            lse_in = scratch["lse"]
    if tokens and rows:
        # Absent arguments are None: no lengths, no token bits (T = 1), no
        # clock (no key ranges).
        lengths = topk_length.view(tokens, -1) if topk_length is not None else None
        round_ctas = _runtime.resident_ctas(call.name, device) if call.range_keys else 1
        tensors = dict(q=rows_view(q), kv=rows_view(kv), do=rows_view(do), lse=lse_in,
                       delta=scratch["delta"], dq=rows_view(dq),
                       dkv=None if deterministic else ws, dkv_fixed=ws if deterministic else None,
                       dkv_lost=lost, round_ctas=round_ctas, **options)
        for union, main in call.launches(scratch, indices.view(tokens, g, topk), lengths,
                                         options["causal"], options["q_offset"]):
            if union is not None:
                _runtime.launch(call.union, union, device, stream)
            if main["clock"] is not None:
                main["clock"].zero_()
            blocks = None
            if call.counting:
                if count:
                    blocks = indices.new_zeros(call.counts_shape(main["tiles"]))
                main["op_counts"] = blocks
            _runtime.launch(call.name, dict(main, **tensors), device, stream)
            launched.append(None if blocks is None else blocks.view(-1))
    elif tokens:
        dq.zero_()
    # dkv from the workspace, added to what dkv_out holds with accumulate.
    if ws.numel():
        postprocess(ws.view(dkv.shape), out=dkv, accumulate=accumulate,
                    fixed_point_unit=2.0 ** -plan.constant("fixed_point_bits")
                    if deterministic else None, lost=lost)
    elif not accumulate:
        dkv.zero_()
    return launched


@torch.library.custom_op("sparse_mla::bwd", mutates_args=())
def _bwd_op(q: torch.Tensor, kv: torch.Tensor, o: torch.Tensor, do: torch.Tensor,
            indices: torch.Tensor, lse: torch.Tensor, sm_scale: float, is_causal: bool,
            lse_base2: bool, topk_length: Optional[torch.Tensor] = None,
            attn_sink: Optional[torch.Tensor] = None, q_offset: int = 0,
            deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    out = sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2,
                         topk_length=topk_length, attn_sink=attn_sink, q_offset=q_offset,
                         deterministic=deterministic)
    d_sink = out[2] if attn_sink is not None else q.new_empty(0, dtype=torch.float32)
    return out[0], out[1], d_sink


@_bwd_op.register_fake
def _(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2, topk_length=None,
      attn_sink=None, q_offset=0, deterministic=False):
    n = q.shape[-2] if attn_sink is not None else 0
    return torch.empty_like(q), torch.empty_like(kv), q.new_empty(n, dtype=torch.float32)


@torch.library.custom_op("sparse_mla::bwd_into",
                         mutates_args=("dq_out", "dkv_out", "workspace", "d_sink_out"))
def _bwd_into_op(q: torch.Tensor, kv: torch.Tensor, o: torch.Tensor, do: torch.Tensor,
                 indices: torch.Tensor, lse: torch.Tensor, sm_scale: float, is_causal: bool,
                 lse_base2: bool, dq_out: torch.Tensor, dkv_out: torch.Tensor,
                 workspace: torch.Tensor, d_sink_out: Optional[torch.Tensor],
                 accumulate: bool = False, topk_length: Optional[torch.Tensor] = None,
                 attn_sink: Optional[torch.Tensor] = None, q_offset: int = 0,
                 deterministic: bool = False) -> torch.Tensor:
    # d_sink_out (None: d_sink is returned) has no default: PyTorch 2.11 drops
    # trailing arguments equal to their defaults before it bumps the versions
    # of the mutated ones, and failed on a mutable d_sink_out=None (IndexError).
    # The schema's required tensors: the dispatcher lets None through.
    for name, t in (("dq_out", dq_out), ("dkv_out", dkv_out), ("workspace", workspace)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"bwd_into: {name} must be a torch.Tensor, got {type(t).__name__}")
    out = sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2,
                         topk_length=topk_length, attn_sink=attn_sink, q_offset=q_offset,
                         deterministic=deterministic, dq_out=dq_out, dkv_out=dkv_out,
                         accumulate=accumulate, workspace=workspace, d_sink_out=d_sink_out)
    # d_sink, or nothing where d_sink_out holds it (an op may not return its
    # input, and an empty tensor allocates nothing).
    if attn_sink is None or d_sink_out is not None:
        return q.new_empty(0, dtype=torch.float32)
    return out[2]


@_bwd_into_op.register_fake
def _(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2, dq_out, dkv_out, workspace,
      d_sink_out, accumulate=False, topk_length=None, attn_sink=None, q_offset=0,
      deterministic=False):
    n = q.shape[-2] if attn_sink is not None and d_sink_out is None else 0
    return q.new_empty(n, dtype=torch.float32)


bwd_op = torch.ops.sparse_mla.bwd
