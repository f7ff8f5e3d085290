"""The sparse-MLA backward as a PyTorch drop-in: preprocess (Delta), the main
kernel (kernels/sparse_mla_bwd.mlir) and the postprocess (fp32 dKV -> bf16),
with every argument checked before anything is launched."""
import math

import torch

from . import _runtime
from .ops import check_devices, check_tensor, postprocess, preprocess

LOG2E = 1.0 / math.log(2.0)

# Token tiles (kernels/sparse_mla_union.mlir): a tile's token bits are an
# i32, and the union builder holds a tile's slots and a bitmap of its keys.
MAX_TILE_TOKENS = 8
# Union entries (keys and bits) of one launch: 2^25 of each, 256 MB.
MAX_UNION_ENTRIES = 1 << 25


def variants():
    """The compiled backward kernels: (D, D_tail, columns per CTA) -> kernel
    name, from the shape parameters in the manifests (tile-specialize)."""
    found = {}
    for name, kernel in _runtime.load_manifest().items():
        p = kernel.get("params", {})
        if name.startswith("sparse_mla_bwd_") and {"hw", "hp", "d", "dqk"} <= p.keys():
            found[(p["d"], p["dqk"] - p["d"], p["hp"])] = name
    return found


def union_variants():
    """The compiled union builders: (bitmap words, entries) -> kernel name."""
    return {(k["params"]["nb"], k["params"]["cap"]): name
            for name, k in _runtime.load_manifest().items()
            if name.startswith("sparse_mla_union_")}


def supported_dims():
    """The (D, D_tail) pairs with a compiled backward."""
    return sorted({(d, t) for d, t, _ in variants()}, reverse=True)


def select_variant(columns, d_v, d_tail):
    """(kernel name, columns per CTA) for `columns` (token, head) columns of
    a tile: the smallest variant that holds them all (padding is masked),
    else the largest (the heads are then split into blocks of it)."""
    found = variants()
    sizes = sorted(n for d, t, n in found if (d, t) == (d_v, d_tail))
    if not sizes:
        raise _runtime.KernelError(f"no compiled backward for D={d_v}, D_tail={d_tail}")
    per_cta = next((n for n in sizes if n >= columns), sizes[-1])
    return found[(d_v, d_tail, per_cta)], per_cta


def select_union(kv_len, slots):
    """The smallest union builder whose bitmap covers kv_len keys and whose
    entries hold `slots` (T * topk), or None."""
    fits = [(nb, cap) for nb, cap in union_variants() if 32 * nb >= kv_len and cap >= slots]
    return union_variants()[min(fits)] if fits else None


def tile_tokens(heads_per_group, seq_len, kv_len, topk, token_tile=None):
    """T, the adjacent query tokens a CTA works on together over the union
    of their keys (DESIGN.md section 5). By default the most, up to
    MAX_TILE_TOKENS, whose (token, head) columns fill the largest CTA: a
    CTA's cost per block of keys hardly depends on its columns, and adjacent
    tokens share most keys, so a tile gathers and scatters far fewer rows
    than its tokens one by one. 1 (per token) where heads_per_group fills a
    CTA, where a builder variant does not fit (Skv or T * topk too large) or
    for single-token rows. ``token_tile`` sets T; it must fit those limits."""
    widest = max(n for *_, n in variants())
    if token_tile is not None:
        if isinstance(token_tile, bool) or not isinstance(token_tile, int) or token_tile < 1:
            raise ValueError(f"token_tile must be a positive int, got {token_tile!r}")
        t = token_tile
        if t > 1:
            if t > MAX_TILE_TOKENS or t * heads_per_group > widest:
                raise ValueError(f"token_tile = {t}: at most {MAX_TILE_TOKENS} tokens of "
                                 f"{heads_per_group} heads per kv group fit a CTA of "
                                 f"{widest} columns")
            if select_union(kv_len, t * topk) is None:
                raise ValueError(f"token_tile = {t}: no union builder for Skv = {kv_len} "
                                 f"and {t} x topk = {t * topk} slots")
        return t
    t = 1
    while (2 * t <= MAX_TILE_TOKENS and 2 * t * heads_per_group <= widest and 2 * t <= seq_len
           and select_union(kv_len, 2 * t * topk) is not None):
        t *= 2
    return t


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
    if b * s * h >= 2**31:
        raise ValueError(f"B * S * H = {b * s * h} (token, head) rows exceed the int32 row index")
    check_devices(q=q, kv=kv, o=o, do=do, indices=indices, lse=lse)
    return b, s, h, dqk, skv, g, d_v


def sparse_mla_bwd(q, kv, o, do, indices, lse, sm_scale=None, is_causal=True,
                   lse_base2=True, dkv_dtype=torch.bfloat16, token_tile=None, stats=None):
    """Gradients (dq, dkv) of sparse MLA, like TileLang's ``sparse_mla_bwd``.

    q [B,S,H,D+D_tail] bf16, kv [B,Skv,G,D+D_tail] bf16, o and do [B,S,H,D]
    bf16, indices [B,S,G,topk] int32, lse [B,S,H] float32 (the batch
    dimension may be left out of all of them). lse is base 2 as TileLang's
    forward returns it, or natural with ``lse_base2=False``. Invalid indices
    (negative, >= Skv, > s when causal) contribute nothing. dq is bf16; dkv
    is bf16, or the float32 accumulator with ``dkv_dtype=torch.float32``.
    ``token_tile`` (default: chosen by ``tile_tokens``) is the number of
    adjacent tokens that share one gather and scatter of their keys. A dict
    passed as ``stats`` receives "tile_tokens" (T) and "blocks": an int32
    tensor of the 64-slot blocks each CTA of the main kernel computed (those
    without a valid slot are skipped), in launch order."""
    if dkv_dtype not in (torch.bfloat16, torch.float32):
        raise TypeError(f"dkv_dtype must be torch.bfloat16 or torch.float32, got {dkv_dtype}")
    if sm_scale is not None and not math.isfinite(float(sm_scale)):
        raise ValueError(f"sm_scale must be finite, got {sm_scale}")
    b, s, h, dqk, skv, g, d_v = _check(q, kv, o, do, indices, lse)
    sm_scale = dqk ** -0.5 if sm_scale is None else float(sm_scale)
    topk = indices.shape[-1]
    heads = h // g
    t = tile_tokens(heads, s, skv, topk, token_tile)
    tokens, rows = b * s, b * skv * g
    dq = torch.empty_like(q)
    ws = torch.zeros(kv.shape, dtype=torch.float32, device=q.device)
    computed = []
    if tokens and rows:
        delta = preprocess(o, do)
        name, per_cta = select_variant(t * heads, d_v, dqk - d_v)
        blocks = -(-heads // per_cta)
        if g * blocks > 65535:
            raise ValueError(f"G * ceil(H/G / {per_cta}) = {g * blocks} exceeds the grid")
        device, stream = q.device.index, torch.cuda.current_stream(q.device).cuda_stream
        idx = indices.view(tokens, g, topk)
        tiles = b * -(-s // t)
        # Per token (T = 1) the slots are the indices; with tiles, the union
        # of each tile's keys, built in launches of at most MAX_UNION_ENTRIES.
        per_launch = tiles if t == 1 else max(1, MAX_UNION_ENTRIES // (g * t * topk))
        for first in range(0, tiles, per_launch):
            n = min(per_launch, tiles - first)
            if t == 1:
                keys = idx.view(tokens * g, topk)
                bits = keys.new_empty(tokens * g, 0)
                counts = keys.new_empty(0)
            else:
                keys = idx.new_empty(n * g, t * topk)
                bits, counts = torch.empty_like(keys), idx.new_empty(n * g)
                _runtime.launch(select_union(skv, t * topk), [n, g],
                                [idx, keys, bits, counts, s, skv, t, first,
                                 int(bool(is_causal))], device, stream)
            computed.append(idx.new_zeros(n * g * blocks if stats is not None else 0))
            _runtime.launch(
                name, [n, g * blocks],
                [q.view(tokens * h, dqk), kv.view(rows, dqk), do.view(tokens * h, d_v),
                 keys, bits, counts, lse.view(tokens, h), delta.view(tokens, h),
                 dq.view(tokens * h, dqk), ws.view(rows, dqk), computed[-1],
                 s, skv, g, heads, t, first, int(bool(is_causal)), sm_scale * LOG2E,
                 1.0 if lse_base2 else LOG2E, sm_scale],
                device, stream)
    elif tokens:
        dq.zero_()
    if stats is not None:
        stats["tile_tokens"] = t
        stats["blocks"] = torch.cat(computed) if computed else indices.new_zeros(0)
    if not ws.numel():
        return dq, ws.to(dkv_dtype)
    return dq, postprocess(ws, out=torch.empty_like(ws, dtype=dkv_dtype))


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
