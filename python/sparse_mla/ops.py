"""PyTorch entry points. Every argument is checked before anything runs; a
wrong one raises TypeError or ValueError naming it."""
import numbers

import torch

from . import _runtime


def check_tensor(name, t, dtype, ndim=None, min_ndim=None, contiguous=True):
    """Common checks of a tensor argument: type, dtype, rank and, unless the
    caller copies strided ones (contiguous=False), contiguity and 16-byte
    alignment (the kernels use 16-byte accesses). Devices are checked
    last, by check_devices, so that shape errors show without a GPU."""
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


def check_devices(**tensors):
    """All tensors on one CUDA device."""
    for name, t in tensors.items():
        if t.device.type != "cuda":
            raise ValueError(f"{name} must be on a CUDA device, got {t.device}")
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        raise ValueError("all tensors must be on one device, got "
                         + ", ".join(f"{n} on {d}" for n, d in devices.items()))


def _stream(device):
    return torch.cuda.current_stream(device).cuda_stream


def preprocess(o: torch.Tensor, do: torch.Tensor, out: torch.Tensor = None) -> torch.Tensor:
    """Delta = sum over the last dimension of o * do, in float32.

    o, do: bf16 [..., D] of one shape, D a multiple of 8 (views whose rows
    lie one stride apart are read in place, others copied). Returns (or
    writes into ``out``) float32 [...]."""
    check_tensor("o", o, torch.bfloat16, min_ndim=1, contiguous=False)
    check_tensor("do", do, torch.bfloat16, min_ndim=1, contiguous=False)
    if do.shape != o.shape:
        raise ValueError(f"do must have the shape of o {tuple(o.shape)}, got {tuple(do.shape)}")
    d = o.shape[-1]
    if d % 8:
        raise ValueError(f"the last dimension of o must be a multiple of 8, got {d}")
    if out is None:
        out = torch.empty(o.shape[:-1], dtype=torch.float32, device=o.device)
    else:
        check_tensor("out", out, torch.float32)
        if out.shape != o.shape[:-1]:
            raise ValueError(f"out must have shape {tuple(o.shape[:-1])}, got {tuple(out.shape)}")
    check_devices(o=o, do=do, out=out)
    if o.numel() == 0:
        return out.zero_()
    _delta(rows_view(o), rows_view(do), out, o.device.index, _stream(o.device))
    return out


def _delta(o_rows, do_rows, out, device, stream):
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
    fixed = fixed_point_unit is not None
    if fixed and (isinstance(fixed_point_unit, bool)
                  or not isinstance(fixed_point_unit, numbers.Real)
                  or not 0 < abs(fixed_point_unit) <= torch.finfo(torch.float32).max):
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
    if out is None:
        out = torch.empty(ws.shape, dtype=torch.bfloat16, device=ws.device)
    else:
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
    check_devices(ws=ws, out=out, **({} if lost is None else {"lost": lost}))
    rows = ws.numel() // c if c else 0
    if rows == 0:
        return out
    f32 = out.dtype == torch.float32
    out_rows = rows_view(out)
    _runtime.launch("sparse_mla_postprocess",
                    dict(ws=None if fixed else ws.view(rows, c),
                         fixed=ws.view(rows, c) if fixed else None,
                         lost=lost.view(rows) if lost is not None else None,
                         dkv=None if f32 else out_rows,
                         dkv_f32=out_rows if f32 else None,
                         accumulate=int(bool(accumulate)), unit=float(fixed_point_unit or 0.0)),
                    ws.device.index, _stream(ws.device))
    return out
