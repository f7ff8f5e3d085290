"""Every argument check of the package's calls, in one place: a wrong
argument raises TypeError or ValueError naming it, before anything runs.
Devices are checked last (check_devices), so that shape errors show
without a GPU."""
import math
import numbers
from typing import NamedTuple

import torch

from . import plan

LOG2E = 1.0 / math.log(2.0)
_F32_MAX = torch.finfo(torch.float32).max


class Problem(NamedTuple):
    """The sizes of a call, from ``shapes`` or ``forward_shapes``."""
    b: int
    s: int
    h: int
    dqk: int
    skv: int
    g: int
    d_v: int
    topk: int
    batched: bool


def check_tensor(name, t, dtype, ndim=None, min_ndim=None, contiguous=True):
    """Common checks of a tensor argument: type, dtype, rank and, unless the
    caller copies strided ones (contiguous=False), contiguity and 16-byte
    alignment (the kernels use 16-byte accesses)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype != dtype:
        raise TypeError(f"{name} must be {dtype}, got {t.dtype}")
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(t.shape)}")
    if min_ndim is not None and t.dim() < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, "
                         f"got shape {tuple(t.shape)}")
    if not contiguous:
        return
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous")
    if t.data_ptr() % 16:
        raise ValueError(f"{name} must be 16-byte aligned")


def check_devices(**tensors):
    """All tensors (None: absent) on one CUDA device."""
    tensors = {name: t for name, t in tensors.items() if t is not None}
    for name, t in tensors.items():
        if t.device.type != "cuda":
            raise ValueError(f"{name} must be on a CUDA device, got {t.device}")
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        raise ValueError("all tensors must be on one device, got "
                         + ", ".join(f"{n} on {d}" for n, d in devices.items()))


def _query(q):
    """q's rank, after its type and rank are checked."""
    check_tensor("q", q, torch.bfloat16, contiguous=False)
    if q.dim() not in (3, 4):
        raise ValueError(f"q must be [B, S, H, D+D_tail] or [S, H, D+D_tail], "
                         f"got shape {tuple(q.shape)}")
    return q.dim()


def _attention(q, kv, indices, d_v, family):
    """The sizes that q, kv and indices give (o's D is d_v), after their
    types, ranks and shapes are checked: (lead, s, h, dqk, skv, g, topk)."""
    n = _query(q)
    check_tensor("kv", kv, torch.bfloat16, ndim=n, contiguous=False)
    check_tensor("indices", indices, torch.int32, ndim=n, contiguous=False)
    lead = q.shape[:-3] if n == 4 else ()
    s, h, dqk = q.shape[-3:]
    skv, g = kv.shape[-3], kv.shape[-2]
    if kv.shape[:-3] != lead or kv.shape[-1] != dqk:
        raise ValueError(f"kv must have shape {(*lead, 'Skv', 'G', dqk)}, got {tuple(kv.shape)}")
    if g < 1 or h % g:
        raise ValueError(f"the heads of q ({h}) must split evenly over the kv groups ({g})")
    if (d_v, dqk - d_v) not in plan.supported_dims(family):
        raise ValueError(f"(D, D_tail) = ({d_v}, {dqk - d_v}) is not compiled; "
                         f"supported: {plan.supported_dims(family)}")
    if indices.shape[:-1] != (*lead, s, g) or indices.shape[-1] < 1:
        raise ValueError(f"indices must have shape {(*lead, s, g, 'topk')} with topk >= 1, "
                         f"got {tuple(indices.shape)}")
    topk = indices.shape[-1]
    if topk > plan.MAX_TOPK:
        raise ValueError(f"topk = {topk} exceeds {plan.MAX_TOPK}")
    b = lead[0] if lead else 1
    if b * skv * g >= 2**31:
        raise ValueError(f"B * Skv * G = {b * skv * g} kv rows exceed the int32 row index")
    if b * s * h >= 2**31:
        raise ValueError(f"B * S * H = {b * s * h} (token, head) rows exceed the int32 row index")
    return lead, s, h, dqk, skv, g, topk


def shapes(q, kv, o, do, indices, lse):
    """The sizes of a backward call, after the arguments' types, ranks and
    shapes are checked."""
    n = _query(q)
    check_tensor("o", o, torch.bfloat16, ndim=n, contiguous=False)
    check_tensor("do", do, torch.bfloat16, ndim=n, contiguous=False)
    check_tensor("lse", lse, torch.float32, ndim=n - 1, contiguous=False)
    lead = q.shape[:-3] if n == 4 else ()
    if o.dim() != n or o.shape[:-1] != q.shape[:-1]:
        raise ValueError(f"o must have shape {(*lead, *q.shape[-3:-1], 'D')}, "
                         f"got {tuple(o.shape)}")
    if do.shape != o.shape:
        raise ValueError(f"do must have the shape of o {tuple(o.shape)}, got {tuple(do.shape)}")
    lead, s, h, dqk, skv, g, topk = _attention(q, kv, indices, o.shape[-1], "bwd")
    if lse.shape != (*lead, s, h):
        raise ValueError(f"lse must have shape {(*lead, s, h)}, got {tuple(lse.shape)}")
    return Problem(lead[0] if lead else 1, s, h, dqk, skv, g, o.shape[-1], topk, bool(lead))


def forward_shapes(q, kv, indices, d_v):
    """The sizes of a forward call, after the arguments' types, ranks and
    shapes are checked; o's D is d_v (an int)."""
    if isinstance(d_v, bool) or not isinstance(d_v, int):
        raise TypeError(f"d_v must be an int, got {type(d_v).__name__}")
    lead, s, h, dqk, skv, g, topk = _attention(q, kv, indices, d_v, "fwd")
    return Problem(lead[0] if lead else 1, s, h, dqk, skv, g, d_v, topk, bool(lead))


def extras(problem, topk_length, attn_sink, q_offset):
    """topk_length [.., S] or [.., S, G] int32, attn_sink [H] float32 and
    q_offset (an int) against the problem's shape."""
    lead = (problem.b,) if problem.batched else ()
    s, h, g = problem.s, problem.h, problem.g
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


def options(token_tile=None, key_ranges=None, union_bytes=0, **flags):
    """The options that are not tensors: each flag (deterministic,
    is_causal, ...) a bool, token_tile a positive int, key_ranges None, a
    bool or a power of two >= 64, union_bytes a non-negative int."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    if token_tile is not None and (isinstance(token_tile, bool) or
                                   not isinstance(token_tile, int) or token_tile < 1):
        raise ValueError(f"token_tile must be a positive int, got {token_tile!r}")
    if key_ranges is not None and not isinstance(key_ranges, bool) and (
            not isinstance(key_ranges, int) or key_ranges < 64 or key_ranges & (key_ranges - 1)):
        raise ValueError(f"key_ranges must be None, a bool or a power of two >= 64 (keys per "
                         f"range), got {key_ranges!r}")
    if isinstance(union_bytes, bool) or not isinstance(union_bytes, int) or union_bytes < 0:
        raise ValueError(f"union_bytes must be a non-negative int, got {union_bytes!r}")


def sm_scale(value, dqk):
    """sm_scale as the float the kernels take: default dqk**-0.5; a real
    number whose product with log2(e) float32 holds."""
    if value is None:
        return dqk ** -0.5
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"sm_scale must be a real number, got {type(value).__name__}")
    if not math.isfinite(value) or abs(value) * LOG2E > _F32_MAX:
        raise ValueError(f"sm_scale must be finite as a float32 (times log2(e)), got {value}")
    return float(value)


def output(name, t, like, dtypes):
    """A caller-owned output: a tensor of one of `dtypes` shaped like `like`."""
    if not isinstance(t, torch.Tensor) or t.dtype not in dtypes:
        raise TypeError(f"{name} must be a torch.Tensor of {' or '.join(map(str, dtypes))}, "
                        f"got {getattr(t, 'dtype', type(t).__name__)}")
    if t.shape != like.shape:
        raise ValueError(f"{name} must have shape {tuple(like.shape)}, got {tuple(t.shape)}")


def outputs(q, kv, attn_sink, dkv_dtype, dq_out, dkv_out, d_sink_out, accumulate):
    """The caller's outputs of a backward call; returns the dkv dtype (that
    of dkv_out where given)."""
    if dkv_out is not None:
        output("dkv_out", dkv_out, kv, (torch.bfloat16, torch.float32))
        dkv_dtype = dkv_out.dtype
    elif dkv_dtype not in (torch.bfloat16, torch.float32):
        raise TypeError(f"dkv_dtype must be torch.bfloat16 or torch.float32, got {dkv_dtype}")
    if dq_out is not None:
        output("dq_out", dq_out, q, (torch.bfloat16,))
    if d_sink_out is not None:
        if attn_sink is None:
            raise ValueError("d_sink_out is the gradient of attn_sink: pass attn_sink")
        output("d_sink_out", d_sink_out, attn_sink, (torch.float32,))
    if accumulate and dkv_out is None:
        raise ValueError("accumulate=True adds into dkv_out: pass dkv_out")
    return dkv_dtype


def workspace(t, least, default):
    """A caller's workspace: uint8, 1-D, of at least `least` bytes
    (`default` is what workspace_bytes gives)."""
    check_tensor("workspace", t, torch.uint8, ndim=1)
    if t.numel() < least:
        raise ValueError(f"workspace must hold at least {least} bytes ({default} from "
                         f"workspace_bytes), got {t.numel()}")


def stats(value):
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"stats must be a dict, got {type(value).__name__}")


def preprocess(o, do, out):
    """preprocess's arguments: bf16 o and do of one shape, D a multiple of 8;
    out float32 of their shape but the last."""
    check_tensor("o", o, torch.bfloat16, min_ndim=1, contiguous=False)
    check_tensor("do", do, torch.bfloat16, min_ndim=1, contiguous=False)
    if do.shape != o.shape:
        raise ValueError(f"do must have the shape of o {tuple(o.shape)}, got {tuple(do.shape)}")
    if o.shape[-1] % 8:
        raise ValueError(f"the last dimension of o must be a multiple of 8, got {o.shape[-1]}")
    if out is not None:
        check_tensor("out", out, torch.float32)
        if out.shape != o.shape[:-1]:
            raise ValueError(f"out must have shape {tuple(o.shape[:-1])}, got {tuple(out.shape)}")


def postprocess(ws, out, accumulate, fixed_point_unit, lost, rows_view):
    """postprocess's arguments (see ops.postprocess); `rows_view` tells
    whether out's rows lie one stride apart."""
    fixed = fixed_point_unit is not None
    if fixed and (isinstance(fixed_point_unit, bool)
                  or not isinstance(fixed_point_unit, numbers.Real)
                  or not 0 < abs(fixed_point_unit) <= _F32_MAX):
        raise ValueError(f"fixed_point_unit must be a nonzero real number that float32 holds, "
                         f"got {fixed_point_unit!r}")
    check_tensor("ws", ws, torch.int64 if fixed else torch.float32, min_ndim=1)
    c = ws.shape[-1]
    if c % 16:
        raise ValueError(f"the last dimension of ws must be a multiple of 16, got {c}")
    if lost is not None:
        if not fixed:
            raise ValueError("lost flags rows of a fixed-point ws: pass fixed_point_unit")
        check_tensor("lost", lost, torch.int32, min_ndim=1)
        if lost.numel() != ws.numel() // c:
            raise ValueError(f"lost must hold one flag per row of ws ({ws.numel() // c}), "
                             f"got {lost.numel()}")
    if accumulate and out is None:
        raise ValueError("accumulate=True adds into out: pass out")
    if out is not None:
        if not isinstance(out, torch.Tensor) or out.dtype not in (torch.bfloat16, torch.float32):
            raise TypeError("out must be a torch.bfloat16 or torch.float32 tensor, got "
                            f"{getattr(out, 'dtype', type(out).__name__)}")
        check_tensor("out", out, out.dtype, contiguous=False)
        if out.shape != ws.shape:
            raise ValueError(f"out must have shape {tuple(ws.shape)}, got {tuple(out.shape)}")
        if rows_view(out, copy=False) is None:
            raise ValueError("out's rows must lie one 16-byte multiple apart, each contiguous")
        if out.data_ptr() == ws.data_ptr():
            raise ValueError("out must not be ws: the columns move")
