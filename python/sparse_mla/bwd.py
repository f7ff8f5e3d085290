"""The sparse-MLA backward as a PyTorch drop-in: preprocess (Delta), the
attention sink's kernels, the union builder of token tiles, the main kernel
(kernels/sparse_mla_bwd.mlir) and the postprocess (the dKV workspace ->
bf16 or f32), with every argument checked before anything is launched.

Scratch memory comes from one workspace (``workspace_bytes`` sizes it): a
call given ``dq_out``, ``dkv_out`` and ``workspace`` allocates nothing."""
import math
import numbers
from typing import Optional

import torch

from . import _runtime
from .ops import _delta, _stream, check_devices, check_tensor, postprocess, rows_view
from .plan import (MAX_TOPK, SINK_CHUNK, UNION_BYTES, _check_key_ranges, _check_token_tile, _plan,
                   round_ctas, supported_dims)

LOG2E = 1.0 / math.log(2.0)
_F32_MAX = torch.finfo(torch.float32).max

# deterministic=True adds dKV as 64-bit integers in units of 2^-40: sums are
# exact whatever the order, |dKV| must stay below 2^23, and each addition
# rounds to 2^-40 (about 1e-12) absolutely. An addition that does not convert
# (not finite, or at least 2^23) flags its row, which comes out NaN.
FIXED_POINT_BITS = 40


def _check_options(token_tile=None, key_ranges=None, **flags):
    """The options that are not tensors: each flag (deterministic,
    is_causal, ...) a bool, token_tile and key_ranges as their checks say."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    _check_token_tile(token_tile)
    _check_key_ranges(key_ranges)


def _shapes(q, kv, o, do, indices, lse):
    """The problem's sizes, after the arguments' types, ranks and shapes are
    checked: (b, s, h, dqk, skv, g, d_v, topk, batched)."""
    check_tensor("q", q, torch.bfloat16, contiguous=False)
    batched = q.dim() == 4
    if q.dim() not in (3, 4):
        raise ValueError(f"q must be [B, S, H, D+D_tail] or [S, H, D+D_tail], "
                         f"got shape {tuple(q.shape)}")
    n = q.dim()
    check_tensor("kv", kv, torch.bfloat16, ndim=n, contiguous=False)
    check_tensor("o", o, torch.bfloat16, ndim=n, contiguous=False)
    check_tensor("do", do, torch.bfloat16, ndim=n, contiguous=False)
    if not isinstance(indices, torch.Tensor):
        raise TypeError(f"indices must be a torch.Tensor, got {type(indices).__name__}")
    check_tensor("indices", indices, torch.int32, ndim=n, contiguous=False)
    check_tensor("lse", lse, torch.float32, ndim=n - 1, contiguous=False)
    lead = q.shape[:-3] if batched else ()
    s, h, dqk = q.shape[-3:]
    skv, g = kv.shape[-3], kv.shape[-2]
    d_v = o.shape[-1]
    if kv.shape[:-3] != lead or kv.shape[-1] != dqk:
        raise ValueError(f"kv must have shape {(*lead, 'Skv', 'G', dqk)}, got {tuple(kv.shape)}")
    if g < 1 or h % g:
        raise ValueError(f"the heads of q ({h}) must split evenly over the kv groups ({g})")
    if o.shape != (*lead, s, h, d_v):
        raise ValueError(f"o must have shape {(*lead, s, h, 'D')}, got {tuple(o.shape)}")
    if do.shape != o.shape:
        raise ValueError(f"do must have the shape of o {tuple(o.shape)}, got {tuple(do.shape)}")
    if (d_v, dqk - d_v) not in supported_dims():
        raise ValueError(f"(D, D_tail) = ({d_v}, {dqk - d_v}) from o and q is not compiled; "
                         f"supported: {supported_dims()}")
    if indices.shape[:-1] != (*lead, s, g) or indices.shape[-1] < 1:
        raise ValueError(f"indices must have shape {(*lead, s, g, 'topk')} with topk >= 1, "
                         f"got {tuple(indices.shape)}")
    topk = indices.shape[-1]
    if topk > MAX_TOPK:
        raise ValueError(f"topk = {topk} exceeds {MAX_TOPK}")
    if lse.shape != (*lead, s, h):
        raise ValueError(f"lse must have shape {(*lead, s, h)}, got {tuple(lse.shape)}")
    b = lead[0] if batched else 1
    if b * skv * g >= 2**31:
        raise ValueError(f"B * Skv * G = {b * skv * g} kv rows exceed the int32 row index")
    if b * s * h >= 2**31:
        raise ValueError(f"B * S * H = {b * s * h} (token, head) rows exceed the int32 row index")
    return b, s, h, dqk, skv, g, d_v, topk, batched


def _check_extras(shape, topk_length, attn_sink, q_offset, lead):
    """topk_length [.., S] or [.., S, G] int32, attn_sink [H] float32 and
    q_offset (an int) against the problem's shape."""
    b, s, h, _, skv, g, *_ = shape
    if topk_length is not None:
        check_tensor("topk_length", topk_length, torch.int32, contiguous=False)
        if topk_length.shape not in ((*lead, s), (*lead, s, g)):
            raise ValueError(f"topk_length must have shape {(*lead, s)} or {(*lead, s, g)} "
                             f"(per kv group), got {tuple(topk_length.shape)}")
    if attn_sink is not None:
        check_tensor("attn_sink", attn_sink, torch.float32, ndim=1, contiguous=False)
        if attn_sink.shape != (h,):
            raise ValueError(f"attn_sink must have shape {(h,)}, got {tuple(attn_sink.shape)}")
    if isinstance(q_offset, bool) or not isinstance(q_offset, int):
        raise TypeError(f"q_offset must be an int, got {type(q_offset).__name__}")
    if not (-2**31 < q_offset and q_offset + s < 2**31):
        raise ValueError(f"q_offset = {q_offset}: positions q_offset .. q_offset + S must fit "
                         f"in int32")


def workspace_bytes(q, kv, o, do, indices, lse, *, attn_sink=None, deterministic=False,
                    token_tile=None, union_bytes=UNION_BYTES, key_ranges=None):
    """Bytes of scratch memory that ``sparse_mla_bwd`` with these arguments
    uses: pass a uint8 CUDA tensor of at least this size as ``workspace``
    (with ``dq_out`` and ``dkv_out``) and the call allocates nothing. Only
    the shapes, dtypes and these options matter (tensors on the "meta"
    device will do). ``union_bytes`` bounds the token tiles' union buffers
    (more launches where they are smaller)."""
    shape = _shapes(q, kv, o, do, indices, lse)
    _check_extras(shape, None, attn_sink, 0, q.shape[:-3])
    _check_options(deterministic=deterministic, token_tile=token_tile, key_ranges=key_ranges)
    if isinstance(union_bytes, bool) or not isinstance(union_bytes, int) or union_bytes < 0:
        raise ValueError(f"union_bytes must be a non-negative int, got {union_bytes!r}")
    return _plan(shape, token_tile, deterministic, attn_sink is not None, union_bytes,
                 key_ranges=key_ranges).bytes


def _contiguous(t):
    """t, or a contiguous 16-byte-aligned copy of it, for the tensors the
    kernels read by position (indices, lse, topk_length, attn_sink)."""
    if t.is_contiguous() and t.data_ptr() % 16 == 0:
        return t
    return t.clone(memory_format=torch.contiguous_format)   # new memory: aligned


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


def _check_output(name, t, like, dtypes):
    if not isinstance(t, torch.Tensor) or t.dtype not in dtypes:
        raise TypeError(f"{name} must be a torch.Tensor of {' or '.join(map(str, dtypes))}, "
                        f"got {getattr(t, 'dtype', type(t).__name__)}")
    if t.shape != like.shape:
        raise ValueError(f"{name} must have shape {tuple(like.shape)}, got {tuple(t.shape)}")


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
      2^-FIXED_POINT_BITS, |dkv| < 2^23). A row that a non-finite value
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
    passed as ``stats`` receives "tile_tokens" (T) and "blocks": an int32
    tensor of the 64-slot blocks each CTA of the main kernel computed (those
    without a valid slot are skipped), in launch order, "range_keys":
    the keys per range of the key-range order (0: off) and "launches": the
    launches of the main kernel that the token tiles' union buffers took."""
    shape = _shapes(q, kv, o, do, indices, lse)
    b, s, h, dqk, skv, g, d_v, topk, batched = shape
    lead = q.shape[:-3]
    _check_extras(shape, topk_length, attn_sink, q_offset, lead)
    _check_options(deterministic=deterministic, token_tile=token_tile, key_ranges=key_ranges,
                   is_causal=is_causal, lse_base2=lse_base2, accumulate=accumulate)
    if stats is not None and not isinstance(stats, dict):
        raise TypeError(f"stats must be a dict, got {type(stats).__name__}")
    if dkv_out is not None:
        _check_output("dkv_out", dkv_out, kv, (torch.bfloat16, torch.float32))
        dkv_dtype = dkv_out.dtype
    elif dkv_dtype not in (torch.bfloat16, torch.float32):
        raise TypeError(f"dkv_dtype must be torch.bfloat16 or torch.float32, got {dkv_dtype}")
    if dq_out is not None:
        _check_output("dq_out", dq_out, q, (torch.bfloat16,))
    if d_sink_out is not None:
        if attn_sink is None:
            raise ValueError("d_sink_out is the gradient of attn_sink: pass attn_sink")
        _check_output("d_sink_out", d_sink_out, attn_sink, (torch.float32,))
    if accumulate and dkv_out is None:
        raise ValueError("accumulate=True adds into dkv_out: pass dkv_out")
    if sm_scale is not None:
        if isinstance(sm_scale, bool) or not isinstance(sm_scale, numbers.Real):
            raise TypeError(f"sm_scale must be a real number, got {type(sm_scale).__name__}")
        # The kernels take sm_scale * log2(e) as a float32.
        if not math.isfinite(sm_scale) or abs(sm_scale) * LOG2E > _F32_MAX:
            raise ValueError(f"sm_scale must be finite as a float32 (times log2(e)), "
                             f"got {sm_scale}")
    sink = attn_sink is not None
    how = dict(key_ranges=key_ranges)
    plan = _plan(shape, token_tile, deterministic, sink, **how)
    if workspace is not None:
        check_tensor("workspace", workspace, torch.uint8, ndim=1)
        # A smaller workspace than workspace_bytes gives fewer tiles a launch.
        plan = _plan(shape, token_tile, deterministic, sink, fit=workspace.numel(), **how)
        if workspace.numel() < plan.bytes:
            least = _plan(shape, token_tile, deterministic, sink, union_bytes=0, **how).bytes
            raise ValueError(f"workspace must hold at least {least} bytes "
                             f"({_plan(shape, token_tile, deterministic, sink, **how).bytes} "
                             f"from workspace_bytes), got {workspace.numel()}")
    check_devices(q=q, kv=kv, o=o, do=do, indices=indices, lse=lse,
                  **{k: v for k, v in dict(topk_length=topk_length, attn_sink=attn_sink,
                                           dq_out=dq_out, dkv_out=dkv_out,
                                           d_sink_out=d_sink_out,
                                           workspace=workspace).items() if v is not None})
    # Rows one stride apart are read in place; other layouts are copied.
    q_rows, kv_rows, do_rows = rows_view(q), rows_view(kv), rows_view(do)
    indices, lse = _contiguous(indices), _contiguous(lse)
    if topk_length is not None:
        topk_length = _contiguous(topk_length)
    if attn_sink is not None:
        attn_sink = _contiguous(attn_sink)
    sm_scale = dqk ** -0.5 if sm_scale is None else float(sm_scale)
    if workspace is None:
        workspace = torch.empty(plan.bytes, dtype=torch.uint8, device=q.device)
    scratch = plan.carve(workspace)
    dq = _buffer(dq_out, lambda: torch.empty(q.shape, dtype=q.dtype, device=q.device))
    device, stream = q.device.index, _stream(q.device)
    tokens, rows, t = plan.tokens, plan.rows, plan.t
    ws = scratch["ws"]
    ws.zero_()
    lost = scratch.get("lost")
    if lost is not None:
        lost.zero_()
    computed = []
    d_sink = None
    if attn_sink is not None:
        d_sink = _buffer(d_sink_out, lambda: torch.empty(h, dtype=torch.float32, device=q.device))
    if tokens:
        delta = scratch["delta"]
        _delta(rows_view(o), do_rows, delta, device, stream)
        lse_in = lse.view(tokens, h)
        if attn_sink is not None:
            _runtime.launch("sparse_mla_sink",
                            dict(lse=lse_in, delta=delta, sink=attn_sink,
                                 lse_out=scratch["lse"], partial=scratch["partial"],
                                 chunk=SINK_CHUNK, to_base2=1.0 if lse_base2 else LOG2E),
                            device, stream)
            _runtime.launch("sparse_mla_sink_sum",
                            dict(partial=scratch["partial"], d_sink=d_sink), device, stream)
            lse_in = scratch["lse"]
    elif d_sink is not None:
        d_sink.zero_()
    if tokens and rows:
        idx = indices.view(tokens, g, topk)
        # Absent arguments are None (an empty memref): no lengths, no token
        # bits (T = 1), no clock (no key ranges), no counts of blocks.
        lengths = topk_length.view(tokens, -1) if topk_length is not None else None
        clock = scratch["clock"] if plan.ranges else None
        dq_rows = rows_view(dq)
        round_size = round_ctas(plan.name, device) if plan.ranges else 1
        range_shift = plan.range_keys.bit_length() - 1 if plan.ranges else 0
        for i in range(plan.launches):
            first = plan.tiles * i // plan.launches
            n = plan.tiles * (i + 1) // plan.launches - first
            if not plan.unions:
                keys, bits, counts = idx.view(tokens * g, topk), None, lengths
            else:
                keys = scratch["keys"][:n * g]
                bits = scratch["bits"][:n * g]
                counts = scratch["counts"][:n]
                _runtime.launch(plan.union,
                                dict(indices=idx, lengths=lengths, keys=keys, bits=bits,
                                     counts=counts.view(-1), seq_len=s, kv_len=skv,
                                     tile_tokens=t, first_tile=first,
                                     causal=int(is_causal), q_offset=q_offset),
                                device, stream)
            if clock is not None:
                clock.zero_()
            blocks = None
            if stats is not None:
                blocks = idx.new_zeros(n * g * plan.blocks)
                computed.append(blocks)
            _runtime.launch(
                plan.name,
                dict(q=q_rows, kv=kv_rows, do=do_rows, keys=keys, bits=bits, counts=counts,
                     lse=lse_in, delta=delta, dq=dq_rows,
                     dkv=None if deterministic else ws, dkv_fixed=ws if deterministic else None,
                     dkv_lost=lost, computed=blocks, clock=clock, seq_len=s, kv_len=skv, groups=g,
                     heads_per_group=h // g, tile_tokens=t, first_tile=first,
                     causal=int(is_causal), q_offset=q_offset, qk_scale=sm_scale * LOG2E,
                     lse_scale=1.0 if lse_base2 else LOG2E, sm_scale=sm_scale,
                     dkv_scale=float(2 ** FIXED_POINT_BITS), range_shift=range_shift,
                     round_ctas=round_size, window=plan.window),
                device, stream)
    elif tokens:
        dq.zero_()
    dq = _deliver(dq, dq_out)
    if d_sink is not None:
        d_sink = _deliver(d_sink, d_sink_out)
    # dkv from the workspace, added to what dkv_out holds with accumulate.
    target = _buffer(dkv_out, lambda: torch.empty(kv.shape, dtype=dkv_dtype, device=kv.device),
                     keep=accumulate)
    if ws.numel():
        postprocess(ws.view(kv.shape), out=target, accumulate=accumulate,
                    fixed_point_unit=2.0 ** -FIXED_POINT_BITS if deterministic else None,
                    lost=lost)
    elif not accumulate:
        target.zero_()
    dkv = _deliver(target, dkv_out)
    if stats is not None:
        stats["tile_tokens"] = t
        stats["range_keys"] = plan.range_keys
        stats["launches"] = len(computed)
        stats["blocks"] = torch.cat(computed) if computed else indices.new_zeros(0)
    return (dq, dkv) if d_sink is None else (dq, dkv, d_sink)


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


@torch.library.custom_op("sparse_mla::bwd_into", mutates_args=("dq_out", "dkv_out", "workspace"))
def _bwd_into_op(q: torch.Tensor, kv: torch.Tensor, o: torch.Tensor, do: torch.Tensor,
                 indices: torch.Tensor, lse: torch.Tensor, sm_scale: float, is_causal: bool,
                 lse_base2: bool, dq_out: torch.Tensor, dkv_out: torch.Tensor,
                 workspace: torch.Tensor, accumulate: bool = False,
                 topk_length: Optional[torch.Tensor] = None, attn_sink: Optional[torch.Tensor] = None,
                 q_offset: int = 0, deterministic: bool = False) -> torch.Tensor:
    out = sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2,
                         topk_length=topk_length, attn_sink=attn_sink, q_offset=q_offset,
                         deterministic=deterministic, dq_out=dq_out, dkv_out=dkv_out,
                         accumulate=accumulate, workspace=workspace)
    return out[2] if attn_sink is not None else q.new_empty(0, dtype=torch.float32)


@_bwd_into_op.register_fake
def _(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2, dq_out, dkv_out, workspace,
      accumulate=False, topk_length=None, attn_sink=None, q_offset=0, deterministic=False):
    n = q.shape[-2] if attn_sink is not None else 0
    return q.new_empty(n, dtype=torch.float32)


bwd_op = torch.ops.sparse_mla.bwd


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
        _check_options(is_causal=is_causal, lse_base2=lse_base2, deterministic=deterministic)
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
