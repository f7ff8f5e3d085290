"""The backward's pre- and postprocess as PyTorch calls, and the views the
kernels read tensors through. Every argument is checked (checks.py) before
anything runs."""
import torch

from . import _runtime, checks


def rows_view(t, copy=True):
    """t [..., D] as a matrix [rows, D] whose rows lie one stride apart: the
    kernels read that stride, so a view whose leading dimensions merge
    (q sliced from a fused projection, say) is taken as it is. Otherwise a
    contiguous copy (copy=True) or None. Rows start 16-byte aligned."""
    d = t.shape[-1] if t.dim() else 1
    rows = t.numel() // d if d else 0
    # Contiguous (the common case): the rows are d apart, no merge to analyse.
    if rows and t.is_contiguous() and t.data_ptr() % 16 == 0 and (d * t.element_size()) % 16 == 0:
        return t.view(rows, d)
    if rows and t.stride(-1) == 1 and t.data_ptr() % 16 == 0:
        # The leading dimensions merge where each one's stride spans the
        # next one's (dimensions of size 1 have no say).
        lead = [(n, st) for n, st in zip(t.shape[:-1], t.stride()[:-1]) if n != 1]
        pitch = lead[-1][1] if lead else d
        merges = all(st == n_in * st_in for (_, st), (n_in, st_in) in zip(lead, lead[1:]))
        if merges and pitch >= d and (pitch * t.element_size()) % 16 == 0:
            return t.as_strided((rows, d), (pitch, 1))
    if not copy:
        return None
    return t.contiguous().view(rows, d)


def contiguous(t):
    """t, or a contiguous 16-byte-aligned copy of it, for the tensors the
    kernels read by position (indices, lse, topk_length, attn_sink)."""
    if t is None or (t.is_contiguous() and t.data_ptr() % 16 == 0):
        return t
    return t.clone(memory_format=torch.contiguous_format)   # new memory: aligned


def stream_of(device):
    """The current CUDA stream of `device`, as the runtime takes it."""
    return torch.cuda.current_stream(device).cuda_stream


def preprocess(o: torch.Tensor, do: torch.Tensor, out: torch.Tensor = None) -> torch.Tensor:
    """Delta = sum over the last dimension of o * do, in float32.

    o, do: bf16 [..., D] of one shape, D a multiple of 8 (views whose rows
    lie one stride apart are read in place, others copied). Returns (or
    writes into ``out``) float32 [...]."""
    checks.preprocess(o, do, out)
    if out is None:
        out = torch.empty(o.shape[:-1], dtype=torch.float32, device=o.device)
    checks.check_devices(o=o, do=do, out=out)
    if o.numel() == 0:
        return out.zero_()
    delta(rows_view(o), rows_view(do), out, o.device.index, stream_of(o.device))
    return out


def delta(o_rows, do_rows, out, device, stream):
    """preprocess's launch, on checked [rows, D] views (no rows: nothing)."""
    _runtime.launch("sparse_mla_preprocess",
                    dict(o=o_rows, do=do_rows, delta=out.view(o_rows.shape[0])), device, stream)


def postprocess(ws: torch.Tensor, out: torch.Tensor = None, accumulate: bool = False,
                fixed_point_unit: float = None, lost: torch.Tensor = None) -> torch.Tensor:
    """The backward's dKV workspace in the natural column order, in bf16
    (rounded to nearest even) or, with a float32 ``out``, float32; with
    ``accumulate``, added to what ``out`` holds.

    ws: float32 [..., C], C a multiple of 16, whose columns are interleaved
    in groups of 16 as the main kernel's atomics add them (column
    8h + 2q + e of a group at 4q + 2h + e); or, with ``fixed_point_unit``,
    int64 [..., C] in the natural order, each unit worth that much (the
    deterministic mode), where ``lost`` (int32, one flag per row of ws, or
    None) marks the rows that an addition which did not convert reached:
    those come out NaN. Returns (or writes into ``out``, bf16 or float32,
    possibly a view whose rows lie one stride apart) a tensor of the same
    shape."""
    checks.postprocess(ws, out, accumulate, fixed_point_unit, lost, rows_view)
    if out is None:
        out = torch.empty(ws.shape, dtype=torch.bfloat16, device=ws.device)
    checks.check_devices(ws=ws, out=out, lost=lost)
    c = ws.shape[-1]
    rows = ws.numel() // c if c else 0
    if rows == 0:
        return out
    fixed = fixed_point_unit is not None
    f32 = out.dtype == torch.float32
    out_rows = rows_view(out)
    _runtime.launch("sparse_mla_postprocess",
                    dict(ws=None if fixed else ws.view(rows, c),
                         fixed=ws.view(rows, c) if fixed else None,
                         lost=lost.view(rows) if lost is not None else None,
                         dkv=None if f32 else out_rows,
                         dkv_f32=out_rows if f32 else None,
                         accumulate=int(bool(accumulate)), unit=float(fixed_point_unit or 0.0)),
                    ws.device.index, stream_of(ws.device))
    return out
