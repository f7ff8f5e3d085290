"""cuDNN-frontend 1.32's DSA backward call, as cuDNN's: a framework that
calls ``cudnn.deepseek_sparse_attention.sparse_attention_backward_wrapper``
(or its plan object, ``SparseAttentionBackward``) changes one import.

cuDNN's contract, kept here: flat MQA layouts (q ``[T, H, D]``, kv ``[T_kv,
D]`` with K = V, out and dout ``[T, H, 512]``, lse ``[T, H]`` natural and
over the keys only, topk_idxs ``[T, K]``, topk_length ``[T]``); a sink
``[H]`` always given (-inf: none) whose gradient always comes back; the
indices alone mask (no causal flag: a negative or >= T_kv index is invalid);
``softmax_scale`` default ``D**-0.5``; the result a dict ``{dq, dkv,
d_sink}`` that also unpacks as a tuple; ``stream`` a CUDA stream handle
(``cuda.CUstream``, a ``torch.cuda.Stream`` or an int; default the current
one); ``workspace`` uint8 of at least ``scratch_workspace_bytes()``.
What differs: bfloat16 only (cuDNN also takes float16); ``block_tile`` and
``q_cluster_mode`` are accepted and checked but change nothing (the token
tiles are this package's own choice); ``deterministic=True`` works on
Hopper (cuDNN's needs SM100)."""
import contextlib

import torch

from . import checks
from .bwd import sparse_mla_bwd, workspace_bytes


class TupleDict(dict):
    """A dict that unpacks like a tuple (of its values in insertion order) and
    takes integer indices, as cuDNN-frontend's result type."""

    def __iter__(self):
        return iter(list(self.values()))

    def __getitem__(self, key):
        if isinstance(key, int) and not isinstance(key, bool):
            values = list(self.values())
            if not 0 <= key < len(values):
                raise IndexError(f"index {key} out of range for TupleDict with {len(values)} items")
            return values[key]
        return super().__getitem__(key)


def _stream(stream, device):
    """A context that makes `stream` (None: leave the current one) current
    on `device`."""
    if stream is None:
        return contextlib.nullcontext()
    if isinstance(stream, torch.cuda.Stream):
        return torch.cuda.stream(stream)
    try:
        handle = int(stream)          # cuda.CUstream, or a raw handle
    except (TypeError, ValueError):
        raise TypeError(f"stream must be a cuda.CUstream, a torch.cuda.Stream or an int, "
                        f"got {type(stream).__name__}") from None
    return torch.cuda.stream(torch.cuda.ExternalStream(handle, device=device))


# The tensors of cuDNN's call and plan, in its order.
_TENSORS = ("q", "kv", "out", "dout", "lse", "attn_sink", "topk_idxs", "topk_length")


def _ours(q, kv, out, dout, lse, attn_sink, topk_idxs, topk_length):
    """cuDNN's tensors as sparse_mla_bwd's (views, G = 1), after cuDNN's
    shape rules are checked."""
    for name, t in (("q", q), ("kv", kv), ("out", out), ("dout", dout), ("lse", lse),
                    ("attn_sink", attn_sink), ("topk_idxs", topk_idxs)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if q.dtype == torch.float16:
        raise TypeError("q is float16: sparse-mla's kernels are compiled for bfloat16")
    if q.dim() != 3:
        raise ValueError(f"q must be 3-D (total_S_q, H, D), got shape {tuple(q.shape)}")
    total_s_q, heads, dim = q.shape
    if dim not in (512, 576):
        raise ValueError(f"head_dim must be 512 or 576, got {dim}")
    if kv.dim() != 2 or kv.shape[1] != dim:
        raise ValueError(f"kv must have shape (total_S_kv, {dim}), got {tuple(kv.shape)}")
    if topk_idxs.dim() != 2 or topk_idxs.shape[0] != total_s_q:
        raise ValueError(f"topk_idxs must have shape ({total_s_q}, topk_max), "
                         f"got {tuple(topk_idxs.shape)}")
    if attn_sink.shape != (heads,):
        raise ValueError(f"attn_sink must have shape {(heads,)}, got {tuple(attn_sink.shape)}")
    if topk_length is not None and (not isinstance(topk_length, torch.Tensor)
                                    or topk_length.shape != (total_s_q,)):
        raise ValueError(f"topk_length must have shape {(total_s_q,)}, got "
                         f"{tuple(getattr(topk_length, 'shape', ()))}")
    return (q, kv.unsqueeze(1), out, dout, topk_idxs.unsqueeze(1), lse), \
        dict(attn_sink=attn_sink, topk_length=topk_length)


def _devices(q, **tensors):
    """cuDNN's device rules, in its words, after the shapes: q on a CUDA
    device, and every other tensor given (None: absent) on q's."""
    if q.device.type != "cuda":
        raise ValueError(f"Q must live on CUDA, got {q.device}")
    for name, t in tensors.items():
        if isinstance(t, torch.Tensor) and t.device != q.device:
            raise ValueError(f"{name} must share Q's device ({q.device}), got {t.device}")


def _options(block_tile, q_cluster_mode, deterministic):
    if isinstance(block_tile, bool) or not isinstance(block_tile, int) or block_tile <= 0:
        raise ValueError(f"block_tile must be a positive int, got {block_tile!r}")
    if q_cluster_mode not in ("off", "adaptive_pair"):
        raise ValueError(f"q_cluster_mode must be 'off' or 'adaptive_pair', got {q_cluster_mode!r}")
    checks.options(deterministic=deterministic)


class SparseAttentionBackward:
    """cuDNN-frontend's plan object: sample tensors fix the contract;
    ``check_support()`` raises ValueError naming what it cannot run,
    ``compile()`` has nothing to do (the kernels are compiled ahead of
    time), ``scratch_workspace_bytes()`` sizes the workspace, ``execute()``
    writes caller-owned dq, dkv and d_sink and, given that workspace,
    allocates nothing."""

    def __init__(self, sample_q, sample_kv, sample_out, sample_dout, sample_lse,
                 sample_attn_sink, sample_topk_idxs, sample_dq=None, sample_dkv=None,
                 sample_topk_length=None, softmax_scale=None, block_tile=64, deterministic=False,
                 q_cluster_mode="off"):
        self.samples = (sample_q, sample_kv, sample_out, sample_dout, sample_lse,
                        sample_attn_sink, sample_topk_idxs, sample_topk_length)
        self.softmax_scale = softmax_scale
        self.block_tile, self.q_cluster_mode = block_tile, q_cluster_mode
        self.deterministic = deterministic

    def check_support(self):
        _options(self.block_tile, self.q_cluster_mode, self.deterministic)
        args, extra = _ours(*self.samples)
        samples = dict(zip(_TENSORS, self.samples))
        _devices(**samples)
        # cuDNN's plans take contiguous tensors (sparse_mla_bwd itself also
        # reads row views in place).
        for name, t in samples.items():
            if isinstance(t, torch.Tensor) and not t.is_contiguous():
                raise NotImplementedError(f"SparseAttentionBackward supports contiguous {name}; "
                                          f"got shape {tuple(t.shape)} strides {t.stride()}")
        checks.extras(checks.shapes(*args), extra["topk_length"], extra["attn_sink"], 0)
        checks.sm_scale(self.softmax_scale, self.samples[0].shape[-1])
        return True

    def compile(self):
        self.check_support()

    def scratch_workspace_bytes(self):
        args, extra = _ours(*self.samples)
        return workspace_bytes(*args, attn_sink=extra["attn_sink"],
                               deterministic=self.deterministic)

    def execute(self, q, kv, out, dout, lse, attn_sink, topk_idxs, dq, dkv, topk_length=None,
                softmax_scale=None, current_stream=None, workspace=None, *, d_sink):
        for name, t in (("dq", dq), ("dkv", dkv), ("d_sink", d_sink)):
            if not isinstance(t, torch.Tensor):
                raise ValueError(f"{name} must be preallocated; use "
                                 "sparse_attention_backward_wrapper for automatic output "
                                 "allocation")
        scale = self.softmax_scale if softmax_scale is None else softmax_scale
        return _run(q, kv, out, dout, lse, attn_sink, topk_idxs, scale, topk_length, dq, dkv,
                    d_sink, self.deterministic, current_stream, workspace)


def _run(q, kv, out, dout, lse, attn_sink, topk_idxs, softmax_scale, topk_length, dq, dkv,
         d_sink, deterministic, stream, workspace):
    args, extra = _ours(q, kv, out, dout, lse, attn_sink, topk_idxs, topk_length)
    if dkv is not None:
        checks.output("dkv", dkv, kv, (torch.bfloat16, torch.float32))
    checks.shapes(*args)
    _devices(q, kv=kv, out=out, dout=dout, lse=lse, attn_sink=attn_sink, topk_idxs=topk_idxs,
             topk_length=topk_length, dq=dq, dkv=dkv, d_sink=d_sink)
    if isinstance(workspace, torch.Tensor):
        # cuDNN's contract: the whole scratch_workspace_bytes() on q's device
        # (sparse_mla_bwd itself also runs in less, in more launches).
        if workspace.device != q.device:
            raise ValueError(f"workspace must be on q's device ({q.device}), got {workspace.device}")
        need = workspace_bytes(*args, attn_sink=extra["attn_sink"], deterministic=deterministic)
        have = workspace.numel() * workspace.element_size()
        if have < need:
            raise ValueError(f"sparse_attention_backward requires a {need}-byte workspace, got "
                             f"{have} bytes")
    with _stream(stream, q.device):
        dq_out, dkv_out, d_sink_out = sparse_mla_bwd(
            *args, softmax_scale, is_causal=False, lse_base2=False, deterministic=deterministic,
            dq_out=dq, dkv_out=None if dkv is None else dkv.unsqueeze(1),
            dkv_dtype=kv.dtype if dkv is None else dkv.dtype, d_sink_out=d_sink,
            workspace=workspace, **extra)
    return dq_out, dkv_out.squeeze(1) if dkv is None else dkv, d_sink_out


def sparse_attention_backward_wrapper(q, kv, out, dout, lse, attn_sink, topk_idxs,
                                      softmax_scale=None, topk_length=None, dq=None, dkv=None,
                                      block_tile=64, deterministic=False, stream=None,
                                      workspace=None, q_cluster_mode="off"):
    """``{'dq', 'dkv', 'd_sink'}`` (a TupleDict) of sparse MLA, with
    cuDNN-frontend 1.32's signature, layouts and defaults (this module's
    docstring). dq and dkv are written in place where given; dkv [T_kv, D]
    has kv's dtype unless the given dkv's is float32."""
    _options(block_tile, q_cluster_mode, deterministic)
    dq_out, dkv_out, d_sink = _run(q, kv, out, dout, lse, attn_sink, topk_idxs, softmax_scale,
                                   topk_length, dq, dkv, None, deterministic, stream, workspace)
    return TupleDict(dq=dq_out, dkv=dkv_out, d_sink=d_sink)
