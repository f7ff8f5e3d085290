"""The sparse-MLA backward as a PyTorch drop-in: preprocess (Delta), the main
kernel (kernels/sparse_mla_bwd.mlir) and the postprocess (fp32 dKV -> bf16),
with every argument checked before anything is launched."""
import math

import torch

from . import _runtime
from .ops import check_devices, check_tensor, postprocess, preprocess

LOG2E = 1.0 / math.log(2.0)

def variants():
    """The compiled backward kernels: (D, D_tail, heads per CTA) -> kernel name,
    from the shape parameters in the manifests (tile-specialize)."""
    found = {}
    for name, kernel in _runtime.load_manifest().items():
        p = kernel.get("params", {})
        if name.startswith("sparse_mla_bwd_") and p.keys() == {"hw", "d", "dqk"}:
            found[(p["d"], p["dqk"] - p["d"], 2 * p["hw"])] = name
    return found


def supported_dims():
    """The (D, D_tail) pairs with a compiled backward."""
    return sorted({(d, t) for d, t, _ in variants()}, reverse=True)


def select_variant(heads, d_v, d_tail):
    """(kernel name, heads per CTA) for `heads` per kv group: the smallest
    variant that holds them all (padded heads are masked), else the largest
    (the heads are then split into blocks of it)."""
    found = variants()
    sizes = sorted(n for d, t, n in found if (d, t) == (d_v, d_tail))
    if not sizes:
        raise _runtime.KernelError(f"no compiled backward for D={d_v}, D_tail={d_tail}")
    per_cta = next((n for n in sizes if n >= heads), sizes[-1])
    return found[(d_v, d_tail, per_cta)], per_cta


def _check(q, kv, o, do, indices, lse):
    check_tensor("q", q, torch.bfloat16)
    batched = q.dim() == 4
    if q.dim() not in (3, 4):
        raise ValueError(f"q must be [B, S, H, D+D_tail] or [S, H, D+D_tail], "
                         f"got shape {tuple(q.shape)}")
    n = q.dim()
    check_tensor("kv", kv, torch.bfloat16, ndim=n)
    check_tensor("o", o, torch.bfloat16, ndim=n)
    check_tensor("do", do, torch.bfloat16, ndim=n)
    if not isinstance(indices, torch.Tensor):
        raise TypeError(f"indices must be a torch.Tensor, got {type(indices).__name__}")
    if indices.dtype != torch.int32:
        raise TypeError(f"indices must be torch.int32, got {indices.dtype}")
    check_tensor("indices", indices, torch.int32, ndim=n)
    check_tensor("lse", lse, torch.float32, ndim=n - 1)
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
    if lse.shape != (*lead, s, h):
        raise ValueError(f"lse must have shape {(*lead, s, h)}, got {tuple(lse.shape)}")
    b = lead[0] if batched else 1
    if b * skv * g >= 2**31:
        raise ValueError(f"B * Skv * G = {b * skv * g} kv rows exceed the int32 row index")
    check_devices(q=q, kv=kv, o=o, do=do, indices=indices, lse=lse)
    return b, s, h, dqk, skv, g, d_v


def sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale=None, is_causal=True,
                   lse_base2=True, dkv_dtype=torch.bfloat16):
    """Gradients (dq, dkv) of sparse MLA, like TileLang's ``sparse_mla_bwd``.

    q [B,S,H,D+D_tail] bf16, kv [B,Skv,G,D+D_tail] bf16, o and do [B,S,H,D]
    bf16, indices [B,S,G,topk] int32, lse [B,S,H] float32 (the batch
    dimension may be left out of all of them). lse is base 2 as TileLang's
    forward returns it, or natural with ``lse_base2=False``. Invalid indices
    (negative, >= Skv, > s when causal) contribute nothing. dq is bf16; dkv
    is bf16, or the float32 accumulator with ``dkv_dtype=torch.float32``."""
    if dkv_dtype not in (torch.bfloat16, torch.float32):
        raise TypeError(f"dkv_dtype must be torch.bfloat16 or torch.float32, got {dkv_dtype}")
    if sm_scale is not None and not math.isfinite(float(sm_scale)):
        raise ValueError(f"sm_scale must be finite, got {sm_scale}")
    b, s, h, dqk, skv, g, d_v = _check(q, kv, o, do, indices, lse)
    sm_scale = dqk ** -0.5 if sm_scale is None else float(sm_scale)
    topk = indices.shape[-1]
    tokens, rows = b * s, b * skv * g
    dq = torch.empty_like(q)
    ws = torch.zeros(kv.shape, dtype=torch.float32, device=q.device)
    if tokens and rows:
        delta = preprocess(o, do)
        heads = h // g
        name, per_cta = select_variant(heads, d_v, dqk - d_v)
        blocks = -(-heads // per_cta)
        if g * blocks > 65535:
            raise ValueError(f"G * ceil(H/G / {per_cta}) = {g * blocks} exceeds the grid")
        _runtime.launch(
            name, [tokens, g * blocks],
            [q.view(tokens, h, dqk), kv.view(rows, dqk), do.view(tokens, h, d_v),
             indices.view(tokens, g, topk), lse.view(tokens, h), delta.view(tokens, h),
             dq.view(tokens, h, dqk), ws.view(rows, dqk),
             s, skv, g, heads, int(bool(is_causal)), sm_scale * LOG2E,
             1.0 if lse_base2 else LOG2E, sm_scale],
            q.device.index, torch.cuda.current_stream(q.device).cuda_stream)
    elif tokens:
        dq.zero_()
    if dkv_dtype == torch.float32:
        return dq, ws
    return dq, postprocess(ws) if ws.numel() else ws.to(torch.bfloat16)


@torch.library.custom_op("sparse_mla::bwd", mutates_args=())
def _bwd_op(q: torch.Tensor, kv: torch.Tensor, o: torch.Tensor, do: torch.Tensor,
            indices: torch.Tensor, lse: torch.Tensor, sm_scale: float, is_causal: bool,
            lse_base2: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2)


@_bwd_op.register_fake
def _(q, kv, o, do, indices, lse, sm_scale, is_causal, lse_base2):
    return torch.empty_like(q), torch.empty_like(kv)


bwd_op = torch.ops.sparse_mla.bwd


class SparseMLA(torch.autograd.Function):
    """Sparse MLA with this backward, for a forward that returns (o, lse):
    ``o, lse = SparseMLA.apply(q, kv, indices, forward, sm_scale, is_causal,
    lse_base2)`` where ``forward(q, kv, indices, sm_scale, is_causal)``
    gives o [.., S, H, D] bf16 and lse [.., S, H] float32 (base 2 unless
    lse_base2 is False). lse is not differentiable."""

    @staticmethod
    def forward(ctx, q, kv, indices, forward, sm_scale=None, is_causal=True, lse_base2=True):
        sm_scale = q.shape[-1] ** -0.5 if sm_scale is None else float(sm_scale)
        o, lse = forward(q, kv, indices, sm_scale, is_causal)
        ctx.save_for_backward(q, kv, o, indices, lse)
        ctx.sm_scale, ctx.is_causal, ctx.lse_base2 = sm_scale, is_causal, lse_base2
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, do, _dlse):
        q, kv, o, indices, lse = ctx.saved_tensors
        dq, dkv = bwd_op(q, kv, o, do.contiguous(), indices, lse, ctx.sm_scale,
                         ctx.is_causal, ctx.lse_base2)
        return dq, dkv, None, None, None, None, None
