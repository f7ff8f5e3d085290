"""Argument checks and the kernel ABI, without a GPU."""
import ctypes
import ctypes.util
import struct

import pytest
import torch

import sparse_mla
from sparse_mla import _runtime


def bf16(*shape):
    return torch.randn(*shape).to(torch.bfloat16)


def test_manifests_describe_the_compiled_kernels():
    kernels = sparse_mla.load_manifest()
    pre = kernels["sparse_mla_preprocess"]
    assert pre["threads"] == 128
    assert [a["kind"] for a in pre["args"]] == ["memref", "memref", "memref"]
    assert [a["dtype"] for a in pre["args"]] == ["bf16", "bf16", "f32"]
    post = kernels["sparse_mla_postprocess"]
    assert [a.get("rank") for a in post["args"]] == [2, 2, 1, 2, 2, None, None]
    assert [a["dtype"] for a in post["args"]] == ["f32", "i64", "i32", "bf16", "f32", "i32", "f32"]
    sink = kernels["sparse_mla_sink"]
    assert [a["dtype"] for a in sink["args"]] == ["f32"] * 5 + ["index", "f32"]
    # The names are the kernels' own, which the runtime passes by.
    assert [a["name"] for a in post["args"]] == ["ws", "fixed", "lost", "dkv", "dkv_f32",
                                                "accumulate", "unit"]
    bwd = next(k for n, k in kernels.items() if n.startswith("sparse_mla_bwd_"))
    assert [a["name"] for a in bwd["args"]][:3] == ["q", "kv", "do"]


def post_args(ws, out):
    """The postprocess's arguments: f32 workspace into bf16, not accumulating
    (the fixed-point workspace, its flags and the f32 output absent)."""
    return dict(ws=ws, fixed=None, lost=None, dkv=out, dkv_f32=None, accumulate=0, unit=0.0)


def test_memrefs_are_passed_as_descriptors():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    ws = torch.zeros(5, 24)
    out = torch.zeros(5, 24, dtype=torch.bfloat16)
    values = _runtime.pack_args(kernel, post_args(ws, out))
    # (allocated, aligned, offset, sizes, strides) of four matrices and a
    # vector, then two scalars.
    assert len(values) == 4 * (3 + 2 + 2) + (3 + 1 + 1) + 2
    assert values[0] == values[1] == ws.data_ptr()
    assert values[2:7] == [0, 5, 24, 24, 1]
    # An absent memref is None: a null pointer and all sizes 0.
    assert values[7:19] == [0] * 12
    assert values[19] == out.data_ptr() and values[21:26] == [0, 5, 24, 24, 1]
    assert values[26:33] == [0] * 7


def test_required_tensors_are_not_left_out():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    pre = sparse_mla.load_manifest()["sparse_mla_preprocess"]
    with pytest.raises(sparse_mla.KernelError, match="argument do is required"):
        _runtime.pack_args(pre, dict(o=torch.zeros(4, 8), do=None, delta=torch.zeros(4)))
    # The postprocess's inputs and outputs are each one of two: both optional.
    _runtime.pack_args(kernel, dict(post_args(torch.zeros(4, 16), torch.zeros(4, 16)), ws=None,
                                    dkv=None))


def test_arguments_are_passed_by_name():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    ws = torch.zeros(5, 24)
    out = torch.zeros(5, 24, dtype=torch.bfloat16)
    # The manifest's order, whatever the dict's.
    backwards = dict(reversed(post_args(ws, out).items()))
    assert _runtime.pack_args(kernel, backwards) == _runtime.pack_args(kernel, post_args(ws, out))
    with pytest.raises(sparse_mla.KernelError, match=r"missing arguments \['unit'\]"):
        _runtime.pack_args(kernel, {k: v for k, v in backwards.items() if k != "unit"})
    with pytest.raises(sparse_mla.KernelError, match=r"unknown arguments \['scale'\]"):
        _runtime.pack_args(kernel, dict(backwards, scale=1.0))


def test_the_launch_buffer_holds_each_parameter_in_its_own_slot():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    ws = torch.zeros(5, 24)
    out = torch.zeros(5, 24, dtype=torch.bfloat16)
    abi = _runtime._abi(kernel)
    values = _runtime.pack_args(kernel, dict(post_args(ws, out), accumulate=1, unit=0.375))
    params = abi.pack(values)
    assert len(params) == len(values) == abi.slots
    # What the driver reads behind each pointer: 8-byte descriptor fields,
    # then an i32 and an f32 (the kernel's C types).
    fields = [ctypes.cast(p, ctypes.POINTER(ctypes.c_int64)).contents.value for p in params]
    assert fields[:-2] == values[:-2]
    assert ctypes.cast(params[-2], ctypes.POINTER(ctypes.c_int32)).contents.value == 1
    assert ctypes.cast(params[-1], ctypes.POINTER(ctypes.c_float)).contents.value == 0.375
    # A value outside its C type is an error, not a wrapped number.
    with pytest.raises(sparse_mla.KernelError, match="does not fit its C type"):
        abi.pack(values[:-2] + [2**31, 0.375])


def test_wrong_rank_for_the_abi_is_rejected():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    with pytest.raises(sparse_mla.KernelError, match="argument ws must have rank 2"):
        _runtime.pack_args(kernel, dict(post_args(torch.zeros(3, 8), torch.zeros(3, 8)),
                                        ws=torch.zeros(3)))


def test_kernels_declare_their_grids():
    # The grid comes from the manifest, evaluated on the arguments: 64 rows a
    # CTA for the pre- and postprocess, 128 heads a CTA for the sink, a
    # (tile, group) per CTA for the union, and for the backward a tile per x
    # and G blocks of hp columns per y; a window's CTAs are its count.
    kernels = sparse_mla.load_manifest()
    rows = dict(o=torch.zeros(130, 8), do=torch.zeros(130, 8), delta=torch.zeros(130))
    assert _runtime.grid_of(kernels["sparse_mla_preprocess"], rows) == [3]
    post = kernels["sparse_mla_postprocess"]
    assert _runtime.grid_of(post, post_args(torch.zeros(64, 16), torch.zeros(64, 16))) == [1]
    fixed = dict(post_args(None, torch.zeros(65, 16)), fixed=torch.zeros(65, 16, dtype=torch.int64))
    assert _runtime.grid_of(post, fixed) == [2]
    sink = dict(lse=torch.zeros(1000, 129), partial=torch.zeros(4, 129), chunk=256)
    assert _runtime.grid_of(kernels["sparse_mla_sink"], sink) == [4, 2]
    assert _runtime.grid_of(kernels["sparse_mla_sink_sum"], sink) == [2]
    window = dict(batch=2, seq_len=9, tile_tokens=4, first_tile=1, tiles=5)
    union = next(k for n, k in kernels.items() if n.startswith("sparse_mla_union"))
    assert _runtime.grid_of(union, dict(window, indices=(18, 3, 4))) == [5, 3]
    for name, bwd in kernels.items():
        if name.startswith("sparse_mla_bwd_"):
            hp = bwd["params"]["hp"]
            args = dict(window, groups=2, heads_per_group=hp + 1)
            assert _runtime.grid_of(bwd, args) == [5, 2 * 2], name
            # 2 batch rows of 3 tiles: a window past the sixth tile is refused.
            with pytest.raises(sparse_mla.KernelError, match=r"its slots \[2, 7\) lie outside "
                                                             r"the 6 work items of grid dimension x"):
                _runtime.grid_of(bwd, dict(args, first_tile=2))


def test_a_declared_grid_is_not_passed_and_a_size_does_not_divide_by_zero():
    ws, out = torch.zeros(4, 16), torch.zeros(4, 16, dtype=torch.bfloat16)
    with pytest.raises(sparse_mla.KernelError, match="declares its grid; do not pass one"):
        _runtime.launch("sparse_mla_postprocess", post_args(ws, out), 0, 0, grid=[1])
    kernel = sparse_mla.load_manifest()["sparse_mla_sink"]
    with pytest.raises(sparse_mla.KernelError, match="divides by zero"):
        _runtime.grid_of(kernel, dict(lse=torch.zeros(2, 3), chunk=0))


@pytest.mark.parametrize("bad, match", [
    (lambda o, do: ("x", do), "o must be a torch.Tensor"),
    (lambda o, do: (o.float(), do), "o must be torch.bfloat16"),
    (lambda o, do: (o, do.half()), "do must be torch.bfloat16"),
    (lambda o, do: (o, do[:8]), "do must have the shape of o"),
    (lambda o, do: (o[:, :12].contiguous(), do[:, :12].contiguous()), "multiple of 8"),
    (lambda o, do: (o, do), "o must be on a CUDA device"),
])
def test_preprocess_rejects_bad_arguments(bad, match):
    o, do = bf16(16, 16), bf16(16, 16)
    with pytest.raises((TypeError, ValueError), match=match):
        sparse_mla.preprocess(*bad(o, do))


def test_rows_view_reads_views_in_place_and_copies_the_rest():
    from sparse_mla.ops import rows_view
    t = bf16(4, 3, 576)
    v = rows_view(t)
    assert v.shape == (12, 576) and v.stride() == (576, 1) and v.data_ptr() == t.data_ptr()
    # q sliced from a fused projection: rows 640 apart, read in place.
    fused = bf16(4, 3, 704)
    q = fused[..., 64:640]
    v = rows_view(q)
    assert v.stride() == (704, 1) and v.data_ptr() == q.data_ptr()
    assert torch.equal(v, q.reshape(12, 576))
    # Size-1 dimensions do not break the merge.
    v = rows_view(fused[:1, :, 64:640].unsqueeze(2))
    assert v.shape == (3, 576) and v.stride() == (704, 1)
    # Every other row of a matrix: one stride apart, in place; every other
    # block of rows: apart by two strides, not one.
    rows = bf16(2, 6, 64)[:, ::2]
    v = rows_view(rows)
    assert v.stride() == (128, 1) and torch.equal(v, rows.reshape(6, 64))
    assert rows_view(bf16(4, 3, 64)[::2, :2], copy=False) is None
    # Leading dimensions that do not merge, a misaligned start, rows 8 bytes
    # off the 16-byte grid: a contiguous copy, or None without copies.
    for bad in (t.transpose(0, 1), fused[..., 1:577], bf16(4, 580)[:, :576]):
        assert rows_view(bad, copy=False) is None
        c = rows_view(bad)
        assert c.is_contiguous() and torch.equal(c, bad.reshape(-1, bad.shape[-1]))


def test_postprocess_rejects_bad_arguments():
    with pytest.raises(TypeError, match="ws must be torch.float32"):
        sparse_mla.postprocess(bf16(4, 16))
    with pytest.raises(ValueError, match="multiple of 16"):
        sparse_mla.postprocess(torch.zeros(4, 8))
    with pytest.raises(ValueError, match="ws must be contiguous"):
        sparse_mla.postprocess(torch.zeros(8, 32)[:, ::2])
    with pytest.raises(ValueError, match="out's rows must lie one 16-byte multiple apart"):
        sparse_mla.postprocess(torch.zeros(4, 16), out=torch.zeros(16, 4).t())
    with pytest.raises(TypeError, match="out must be a torch.bfloat16 or torch.float32"):
        sparse_mla.postprocess(torch.zeros(4, 16), out=torch.zeros(4, 16, dtype=torch.int32))
    with pytest.raises(ValueError, match="out must have shape"):
        sparse_mla.postprocess(torch.zeros(4, 16), out=torch.zeros(4, 32))
    ws = torch.zeros(4, 16)
    with pytest.raises(ValueError, match="out must not be ws"):
        sparse_mla.postprocess(ws, out=ws)
    with pytest.raises(ValueError, match="ws must be on a CUDA device"):
        sparse_mla.postprocess(torch.zeros(4, 16))
    with pytest.raises(TypeError, match="ws must be torch.int64"):
        sparse_mla.postprocess(torch.zeros(4, 16), fixed_point_unit=2.0 ** -40)
    for unit in (1e39, 0.0, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="fixed_point_unit must be a nonzero real number"):
            sparse_mla.postprocess(torch.zeros(4, 16, dtype=torch.int64), fixed_point_unit=unit)
    with pytest.raises(ValueError, match="accumulate=True adds into out"):
        sparse_mla.postprocess(torch.zeros(4, 16), accumulate=True)
    fixed, unit = torch.zeros(4, 16, dtype=torch.int64), 2.0 ** -40
    with pytest.raises(ValueError, match="lost flags rows of a fixed-point ws"):
        sparse_mla.postprocess(torch.zeros(4, 16), lost=torch.zeros(4, dtype=torch.int32))
    with pytest.raises(TypeError, match="lost must be torch.int32"):
        sparse_mla.postprocess(fixed, fixed_point_unit=unit, lost=torch.zeros(4))
    with pytest.raises(ValueError, match=r"lost must hold one flag per row of ws \(4\), got 3"):
        sparse_mla.postprocess(fixed, fixed_point_unit=unit, lost=torch.zeros(3, dtype=torch.int32))


def test_misaligned_tensors_are_rejected():
    base = torch.zeros(17 * 16, dtype=torch.float32)
    ws = base[1:1 + 16 * 16].view(16, 16)
    with pytest.raises(ValueError, match="16-byte aligned"):
        sparse_mla.postprocess(ws)


def test_missing_runtime_library_is_a_kernel_error(monkeypatch):
    monkeypatch.setenv("SPARSE_MLA_RUNTIME", "/nonexistent/libsparse_mla_runtime.so")
    _runtime._library.cache_clear()
    try:
        with pytest.raises(sparse_mla.KernelError, match="cannot load the sparse-mla runtime"):
            _runtime._library()
    finally:
        _runtime._library.cache_clear()


def test_runtime_reports_a_missing_driver(monkeypatch):
    # The bundled runtime opens the driver lazily; without one the error says so.
    if ctypes.util.find_library("cuda"):
        pytest.skip("a CUDA driver is installed")
    ws, out = torch.zeros(4, 16), torch.zeros(4, 16, dtype=torch.bfloat16)
    with pytest.raises(sparse_mla.KernelError, match="cannot open the CUDA driver"):
        _runtime.launch("sparse_mla_postprocess", post_args(ws, out), 0, 0)


def bwd_args(b=1, s=4, h=16, g=1, skv=8, topk=5, d_v=512, d_tail=64):
    q = bf16(b, s, h, d_v + d_tail)
    kv = bf16(b, skv, g, d_v + d_tail)
    o, do = bf16(b, s, h, d_v), bf16(b, s, h, d_v)
    idx = torch.zeros(b, s, g, topk, dtype=torch.int32)
    lse = torch.zeros(b, s, h)
    return [q, kv, o, do, idx, lse]


@pytest.mark.parametrize("pos,bad,exc,match", [
    (0, lambda t: t.float(), TypeError, "q must be torch.bfloat16"),
    (1, lambda t: t.half(), TypeError, "kv must be torch.bfloat16"),
    (4, lambda t: t.long(), TypeError, "indices must be torch.int32"),
    (4, lambda t: t.tolist(), TypeError, "indices must be a torch.Tensor"),
    (5, lambda t: t.double(), TypeError, "lse must be torch.float32"),
    (0, lambda t: t[0, 0], ValueError, "q must be"),
    (1, lambda t: t[..., :512].contiguous(), ValueError, "kv must have shape"),
    (2, lambda t: t[:, :, :8].contiguous(), ValueError, "o must have shape"),
    (3, lambda t: t[:, :2], ValueError, "do must have the shape of o"),
    (4, lambda t: t[..., :0], ValueError, "topk >= 1"),
    (5, lambda t: t[:, :, :3].contiguous(), ValueError, "lse must have shape"),
])
def test_sparse_mla_bwd_rejects_bad_arguments(pos, bad, exc, match):
    args = bwd_args()
    args[pos] = bad(args[pos])
    with pytest.raises(exc, match=match):
        sparse_mla.sparse_mla_bwd(*args)


def test_sparse_mla_bwd_rejects_bad_shapes():
    with pytest.raises(ValueError, match="split evenly over the kv groups"):
        sparse_mla.sparse_mla_bwd(*bwd_args(h=6, g=4))
    with pytest.raises(ValueError, match=r"\(D, D_tail\) = \(256, 64\)"):
        sparse_mla.sparse_mla_bwd(*bwd_args(d_v=256))
    with pytest.raises(TypeError, match="dkv_dtype"):
        sparse_mla.sparse_mla_bwd(*bwd_args(), dkv_dtype=torch.float16)
    with pytest.raises(ValueError, match="sm_scale must be finite"):
        args = bwd_args()
        sparse_mla.sparse_mla_bwd(*args, sm_scale=float("nan"))
    # Finite in float64 but not as the kernels' float32 (checked before any launch).
    with pytest.raises(ValueError, match="sm_scale must be finite as a float32"):
        sparse_mla.sparse_mla_bwd(*bwd_args(), sm_scale=3e38)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(topk_length=[5] * 4), TypeError, "topk_length must be a torch.Tensor"),
    (dict(topk_length=torch.zeros(1, 4, dtype=torch.int64)), TypeError,
     "topk_length must be torch.int32"),
    (dict(topk_length=torch.zeros(1, 5, dtype=torch.int32)), ValueError,
     r"topk_length must have shape \(1, 4\) or \(1, 4, 1\)"),
    (dict(attn_sink=torch.zeros(16, dtype=torch.float64)), TypeError,
     "attn_sink must be torch.float32"),
    (dict(attn_sink=torch.zeros(8)), ValueError, r"attn_sink must have shape \(16,\)"),
    (dict(attn_sink=torch.zeros(1, 16)), ValueError, "attn_sink must have 1 dimensions"),
    (dict(q_offset=1.5), TypeError, "q_offset must be an int"),
    (dict(q_offset=2**31), ValueError, "q_offset = 2147483648"),
    (dict(deterministic=1), TypeError, "deterministic must be a bool"),
    (dict(is_causal="False"), TypeError, "is_causal must be a bool"),
    (dict(lse_base2=0), TypeError, "lse_base2 must be a bool"),
    (dict(accumulate=1), TypeError, "accumulate must be a bool"),
    (dict(sm_scale="abc"), TypeError, "sm_scale must be a real number"),
    (dict(stats=[]), TypeError, "stats must be a dict"),
    (dict(token_tile=[2]), ValueError, "token_tile must be a positive int"),
    (dict(key_ranges=100), ValueError, "key_ranges must be None, a bool or a power of two"),
    (dict(key_ranges=32), ValueError, "key_ranges must be None, a bool or a power of two"),
    (dict(key_ranges="on"), ValueError, "key_ranges must be None, a bool or a power of two"),
    (dict(dq_out=torch.zeros(1, 4, 16, 576)), TypeError, "dq_out must be a torch.Tensor of "
     "torch.bfloat16"),
    (dict(dq_out=bf16(1, 4, 16, 512)), ValueError, "dq_out must have shape"),
    (dict(dkv_out=torch.zeros(1, 8, 1, 576, dtype=torch.float16)), TypeError,
     "dkv_out must be a torch.Tensor of torch.bfloat16 or torch.float32"),
    (dict(dkv_out=torch.zeros(1, 8, 2, 576)), ValueError, "dkv_out must have shape"),
    (dict(accumulate=True), ValueError, "accumulate=True adds into dkv_out"),
    (dict(workspace=torch.zeros(64)), TypeError, "workspace must be torch.uint8"),
    (dict(workspace=torch.zeros(64, dtype=torch.uint8)), ValueError,
     "workspace must hold at least"),
])
def test_new_arguments_are_checked_before_launch(kw, exc, match):
    # Each is reported before the device check (these tensors are on the CPU).
    with pytest.raises(exc, match=match):
        sparse_mla.sparse_mla_bwd(*bwd_args(), **kw)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(attn_sink=[1.0]), TypeError, "attn_sink must be a torch.Tensor"),
    (dict(attn_sink=torch.zeros(3)), ValueError, r"attn_sink must have shape \(16,\)"),
    (dict(union_bytes="x"), ValueError, "union_bytes must be a non-negative int"),
    (dict(union_bytes=-5), ValueError, "union_bytes must be a non-negative int"),
    (dict(deterministic=None), TypeError, "deterministic must be a bool"),
])
def test_workspace_bytes_checks_its_options(kw, exc, match):
    with pytest.raises(exc, match=match):
        sparse_mla.workspace_bytes(*bwd_args(), **kw)


def test_workspace_bytes_follow_the_options():
    args = bwd_args(s=64, h=16, skv=256, topk=64)
    base = sparse_mla.workspace_bytes(*args)
    # delta (64 x 16 f32) + the f32 dKV accumulator (256 x 576) + the union
    # buffers of 16 tiles of 4 tokens (keys and bits of 4 x 64 slots, counts).
    assert base == 4096 + 256 * 576 * 4 + 2 * 16 * 256 * 4 + 256
    # Fixed point doubles the accumulator and flags its rows (i32 each); a
    # sink adds lse' and its partials.
    assert (sparse_mla.workspace_bytes(*args, deterministic=True)
            == base + 256 * 576 * 4 + 256 * 4)
    assert sparse_mla.workspace_bytes(*args, attn_sink=torch.zeros(16)) == base + 4096 + 256
    # Per token there are no union buffers; a smaller budget means fewer tiles a launch.
    assert sparse_mla.workspace_bytes(*args, token_tile=1) == 4096 + 256 * 576 * 4
    small = sparse_mla.workspace_bytes(*args, union_bytes=2 * 8 * 256)
    assert small == 4096 + 256 * 576 * 4 + 2 * 2 * 256 * 4 + 256
    # 16 tiles with room for 3 a launch: 6 launches of 2 or 3, none of 1.
    plan = sparse_mla.plan.plan(sparse_mla.checks.shapes(*args), union_bytes=3 * 8 * 256)
    assert (plan.launch_count, plan.per_launch) == (6, 3)
    meta = [t.to("meta") for t in args]
    assert sparse_mla.workspace_bytes(*meta) == base
    # Key ranges of 64 keys (4 of them) add a clock row per CTA (16 tiles);
    # per token they need the union buffers too (64 tokens of 64 slots).
    assert sparse_mla.workspace_bytes(*args, key_ranges=64) == base + 16 * 4 * 4
    assert (sparse_mla.workspace_bytes(*args, token_tile=1, key_ranges=64)
            == 4096 + 256 * 576 * 4 + 2 * 64 * 64 * 4 + 256 + 64 * 4 * 4)


def recorded_launches(monkeypatch, *args, call=None, **kwargs):
    """sparse_mla_bwd (or `call`) on CPU tensors with a C runtime that records each
    launch: [(kernel, grid, {argument: descriptor or scalar})], a memref's
    descriptor as (pointer, sizes, strides), decoded from the parameter
    buffer the driver would read."""
    kernels = sparse_mla.load_manifest()
    launches, names = [], {}

    class Library:
        def smla_get_kernel(self, path, name, device, handle):
            handle._obj.value = len(names) + 1
            names[handle._obj.value] = name.decode()
            return 0

        def smla_launch(self, handle, gx, gy, gz, threads, shared, stream, params):
            name = names[handle.value]
            abi = _runtime._abi(kernels[name])
            flat = list(struct.unpack(abi.format, ctypes.string_at(params[0], 8 * abi.slots)))
            decoded = {}
            for arg, rank in zip(abi.names, abi.ranks):
                if rank is None:
                    decoded[arg] = flat.pop(0)
                else:
                    d, flat = flat[:3 + 2 * rank], flat[3 + 2 * rank:]
                    decoded[arg] = (d[1], tuple(d[3:3 + rank]), tuple(d[3 + rank:]))
            launches.append((name, (gx, gy, gz), decoded))
            return 0
    monkeypatch.setattr(_runtime, "_library", lambda: Library())
    monkeypatch.setattr(sparse_mla.checks, "check_devices", lambda **_: None)
    monkeypatch.setattr("sparse_mla.cudnn._devices", lambda *_, **__: None)
    monkeypatch.setattr(sparse_mla.bwd, "stream_of", lambda device: 0)
    monkeypatch.setattr(sparse_mla.ops, "stream_of", lambda device: 0)
    monkeypatch.setattr(sparse_mla.fwd, "stream_of", lambda device: 0)
    (call or sparse_mla.sparse_mla_bwd)(*args, **kwargs)
    return launches


ABSENT = (0, (0, 0), (0, 0))


def test_launches_pass_absent_arguments_as_empty_descriptors(monkeypatch):
    # Deterministic, dkv in float32, token tiles: the main kernel adds into
    # the fixed-point workspace only, and the postprocess writes the f32
    # output, taking its columns from it.
    args = bwd_args(s=8, h=16, skv=64, topk=8)
    launches = recorded_launches(monkeypatch, *args, deterministic=True,
                                 dkv_dtype=torch.float32)
    assert [n.split("_")[2] for n, _, _ in launches] == ["preprocess", "union", "bwd",
                                                       "postprocess"]
    main, post = launches[2][2], launches[3][2]
    assert main["dkv"] == ABSENT and main["clock"] == ABSENT
    assert main["dkv_fixed"][1] == (64, 576) and main["dkv_lost"][1] == (64,)
    assert "op_counts" not in main and main["bits"][1] == main["keys"][1]
    assert post["ws"] == ABSENT and post["dkv"] == ABSENT
    assert post["fixed"][1:] == ((64, 576), (576, 1)) and post["dkv_f32"][1] == (64, 576)
    assert launches[3][1] == (1, 1, 1)
    # Per token in the default mode: no token bits, no counts, no fixed point.
    launches = recorded_launches(monkeypatch, *args, token_tile=1)
    assert [n.split("_")[2] for n, _, _ in launches] == ["preprocess", "bwd", "postprocess"]
    main, post = launches[1][2], launches[2][2]
    assert main["bits"] == ABSENT and main["counts"] == ABSENT
    assert main["dkv_fixed"] == ABSENT and main["dkv_lost"] == (0, (0,), (0,))
    assert main["keys"][1:] == ((8, 8), (8, 1)) and main["dkv"][1] == (64, 576)
    assert post["fixed"] == ABSENT and post["dkv_f32"] == ABSENT and post["dkv"][1] == (64, 576)


def test_the_workspace_is_carved_into_aligned_pieces_that_do_not_overlap():
    args = bwd_args(s=64, h=16, skv=256, topk=64)
    plan = sparse_mla.plan.plan(sparse_mla.checks.shapes(*args), None, True, True, key_ranges=64)
    # A caller's workspace may be a view that starts inside a larger buffer.
    buffer = torch.zeros(plan.bytes + 1024, dtype=torch.uint8)
    start = 256 - buffer.data_ptr() % 256
    workspace = buffer[start:start + plan.bytes + 7]
    pieces = plan.carve(workspace)
    assert list(pieces) == [name for name, _, _ in plan.pieces]
    spans = []
    for (name, dtype, shape), piece in zip(plan.pieces, pieces.values()):
        assert piece.dtype == dtype and piece.shape == shape and piece.is_contiguous(), name
        begin = piece.data_ptr() - workspace.data_ptr()
        assert begin % 256 == 0, name
        spans.append((begin, begin + piece.numel() * piece.element_size()))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert spans[0][0] == 0 and spans[-1][1] <= plan.bytes
    # Each piece writes its own bytes.
    for i, piece in enumerate(pieces.values()):
        piece.view(torch.uint8).fill_(i + 1)
    for i, (begin, end) in enumerate(spans):
        assert bool((workspace[begin:end] == i + 1).all())


def test_key_ranges_follow_the_l2_of_the_target():
    l2 = _runtime.target()["l2_bytes"]
    # Per token: off while the fp32 dKV and kv rows of the keys fit the L2;
    # then the largest power of two of keys whose rows, twice over (the
    # window of 1), fit it. Token tiles: off up to eight times the L2.
    fits = l2 // (576 * 6)
    assert sparse_mla.plan.key_range_keys(fits, 576) == 0
    keys = sparse_mla.plan.key_range_keys(fits + 1, 576)
    assert keys & (keys - 1) == 0 and 2 * keys * 576 * 6 <= l2 < 4 * keys * 576 * 6
    assert sparse_mla.plan.key_range_keys(8 * fits, 576, token_tiles=True) == 0
    assert sparse_mla.plan.key_range_keys(8 * fits + 8, 576, token_tiles=True) == keys
    assert sparse_mla.plan.key_range_keys(1024, 576, True) == keys
    assert sparse_mla.plan.key_range_keys(1 << 20, 576, False) == 0
    assert sparse_mla.plan.key_range_keys(1024, 576, 256) == 256
    # The deterministic mode's accumulator is 8 bytes a column: on sooner,
    # in smaller ranges, and for token tiles as soon as for tokens.
    det_fits = l2 // (576 * 10)
    assert sparse_mla.plan.key_range_keys(det_fits, 576, deterministic=True) == 0
    det_keys = sparse_mla.plan.key_range_keys(det_fits + 1, 576, deterministic=True)
    assert det_keys & (det_keys - 1) == 0 and 2 * det_keys * 576 * 10 <= l2 < 4 * det_keys * 576 * 10
    assert sparse_mla.plan.key_range_keys(det_fits, 576, token_tiles=True, deterministic=True) == 0
    assert sparse_mla.plan.key_range_keys(det_fits + 1, 576, token_tiles=True,
                                         deterministic=True) == det_keys


def test_sparse_mla_bwd_checks_the_device_last():
    with pytest.raises(ValueError, match="q must be on a CUDA device"):
        sparse_mla.sparse_mla_bwd(*bwd_args())
    with pytest.raises(ValueError, match="q must be on a CUDA device"):
        sparse_mla.sparse_mla_bwd(*[t[0] for t in bwd_args()])  # un-batched


def test_variants_are_compiled_for_each_supported_shape():
    kernels = sparse_mla.load_manifest()
    assert sparse_mla.plan.supported_dims() == [(512, 64), (512, 0)]
    for d_v, d_tail in sparse_mla.plan.supported_dims():
        for columns, per_cta in [(1, 32), (16, 32), (32, 32), (33, 64), (64, 64), (128, 64)]:
            name, n = sparse_mla.plan.select_variant(columns, d_v, d_tail)
            assert n == per_cta
            k = kernels[name]
            # Which warpgroup adds which dKV columns and holds which dQ^T
            # rows is tile-split-partitions', not a shape parameter.
            assert k["params"] == {"hw": per_cta // 2, "hp": per_cta, "d": d_v,
                                   "dqk": d_v + d_tail, "det": 0, "fixed_point_bits": 40,
                                   "range_window": 1}
            assert (k["threads"] == 256
                    and k["shared_bytes"] <= _runtime.target()["shared_bytes_per_cta"])
            det, _ = sparse_mla.plan.select_variant(columns, d_v, d_tail, deterministic=True)
            assert kernels[det]["params"] == dict(k["params"], det=1)
            assert kernels[det]["shared_bytes"] == k["shared_bytes"]
    with pytest.raises(sparse_mla.KernelError, match="no compiled backward for D=256"):
        sparse_mla.plan.select_variant(16, 256, 64)


@pytest.mark.parametrize("heads, seq, kv, topk, tokens", [
    (8, 4096, 4096, 2048, 8),      # GLM-5.1 at TP 8: 8 x 8 columns
    (16, 4096, 4096, 2048, 4),     # 4 x 16
    (24, 4096, 4096, 2048, 2),     # 2 x 24 of 64 columns
    (32, 4096, 4096, 2048, 2),
    (32, 16384, 16384, 2048, 1),   # unions 1.21x smaller do not pay for 64 columns
    (16, 16384, 16384, 2048, 4),
    (33, 4096, 4096, 2048, 1),     # more than half a CTA: per token
    (64, 4096, 4096, 2048, 1),
    (128, 4096, 4096, 2048, 1),
    (1, 4096, 4096, 2048, 8),
    (16, 3, 4096, 2048, 1),        # no more tokens than a row has (2 save nothing)
    (16, 1, 4096, 2048, 1),
    (8, 4096, 4096, 4096, 4),      # T * topk within the largest builder
    (16, 4096, 4096, 16384, 1),
    (16, 4096, 262144, 2048, 2),   # the largest bitmap: 8192 words
    (16, 4096, 262145, 2048, 1),
])
def test_tile_tokens_by_shape(heads, seq, kv, topk, tokens):
    assert sparse_mla.plan.tile_tokens(heads, seq, kv, topk) == tokens


def test_the_token_tile_costs_follow_the_unions():
    # Tokens that draw their k keys from n: the union of t tokens' keys is
    # n (1 - (1 - k/n)^t). Drawn from 10^5 keys, 64 keys a token hardly
    # overlap: tiles of 2 (32 columns) cost what tokens one by one do, tiles
    # of 4 (64 columns) BLOCK_COST[64] times that.
    cost = sparse_mla.plan.tile_cost
    assert cost(1, 16, 64, 100000, 64) == pytest.approx(64.0)
    assert cost(2, 16, 64, 100000, 64) == pytest.approx(64.0, rel=0.01)
    assert (cost(4, 16, 64, 100000, 64)
            == pytest.approx(64.0 * sparse_mla.plan.BLOCK_COST[64], rel=0.01))
    # Every key at or before a token (Skv = S, topk larger): adjacent tokens
    # pick the same keys, and a tile of 2 costs about half.
    assert cost(2, 16, 64, 64, 2048) == pytest.approx(cost(1, 16, 64, 64, 2048) / 2, rel=0.05)


def test_union_builder_variants_cover_the_tiles():
    for kv, slots, found in [(32768, 8192, "cap8192_nb1024"), (32769, 8192, "cap8192_nb8192"),
                             (100, 8193, "cap16384_nb1024"), (262145, 8, None)]:
        name = sparse_mla.plan.select_union(kv, slots)
        assert (name is None) if found is None else name.endswith(found)


@pytest.mark.parametrize("tile, match", [
    (0, "token_tile must be a positive int"), (2.0, "positive int"), (True, "positive int"),
    (16, "at most 8 tokens"), (8, "at most 8 tokens of 16 heads"),
])
def test_token_tile_is_checked(tile, match):
    # Its type by the call's checks, its size by the plan.
    with pytest.raises(ValueError, match=match):
        sparse_mla.checks.options(token_tile=tile)
        sparse_mla.plan.tile_tokens(16, 4096, 4096, 2048, tile)


def test_token_tiles_need_a_union_builder():
    with pytest.raises(ValueError, match="no union builder for Skv = 300000"):
        sparse_mla.plan.tile_tokens(16, 4096, 300000, 2048, 2)
    assert sparse_mla.plan.tile_tokens(16, 4096, 300000, 2048, 1) == 1


def test_results_are_computed_in_place_or_delivered_by_copy():
    from sparse_mla.bwd import _buffer, _deliver   # the call's own helpers
    new = lambda: torch.full((4, 32), 7.0)
    # No out: a new buffer, returned as it is.
    r = _buffer(None, new)
    assert _deliver(r, None) is r
    # An out whose rows lie one stride apart is written in place.
    out = torch.zeros(4, 64)[:, :32]
    assert _buffer(out, new) is out and _deliver(out, out) is out
    # Other layouts: a new buffer (or, to accumulate, a copy of what out
    # holds), copied into out at the end.
    out = torch.arange(128.0).view(32, 4).t()
    r = _buffer(out, new)
    assert r is not out and r.eq(7).all()
    kept = _buffer(out, new, keep=True)
    assert kept.is_contiguous() and torch.equal(kept, out)
    kept += 1
    want = out + 1
    assert _deliver(kept, out) is out and torch.equal(out, want)


def test_tensors_read_by_position_are_made_contiguous_and_aligned():
    from sparse_mla.ops import contiguous as _contiguous
    t = torch.arange(20, dtype=torch.int32)
    assert _contiguous(t) is t
    for bad in (t[1:17], t[::2]):             # misaligned, strided
        c = _contiguous(bad)
        assert c.is_contiguous() and c.data_ptr() % 16 == 0 and torch.equal(c, bad)


def kernel_args(kernel, scalars=None, absent=()):
    """Arguments a kernel's manifest accepts: every scalar 2 (or as given),
    every tensor but the `absent` ones (None) of the shape its stated
    extents give (4 where any), in the order the extents need (one tensor's
    size may state another's)."""
    dtypes = {"bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32,
              "i64": torch.int64}
    args = {a["name"]: (scalars or {}).get(a["name"], 2)
            for a in kernel["args"] if a["kind"] == "scalar"}
    args.update({name: None for name in absent})
    pending = [a for a in kernel["args"] if a["kind"] == "memref" and a["name"] not in absent]
    while pending:
        waiting = []
        for a in pending:
            try:
                shape = [4 if e == "?" else _runtime._size(e, kernel["name"])(args)
                         for e in a["extents"]]
            except KeyError:     # a size of a tensor not made yet
                waiting.append(a)
                continue
            args[a["name"]] = torch.zeros(shape, dtype=dtypes[a["dtype"]])
        assert len(waiting) < len(pending), f"{kernel['name']}: extents that need each other"
        pending = waiting
    return args


def test_every_kernel_refuses_a_wrong_sized_tensor_before_any_launch(monkeypatch):
    # For each argument of each compiled kernel, each extent its manifest
    # states, one more than stated raises a KernelError that names the
    # argument, and nothing reaches the driver; a tensor left out (None) is
    # refused unless the kernel says it is optional.
    launched = []

    class Library:
        def smla_get_kernel(self, *a):
            launched.append(a)
            return 0

        def smla_launch(self, *a):
            launched.append(a)
            return 0
    monkeypatch.setattr(_runtime, "_library", lambda: Library())
    # A window of one tile of two tokens in rows of four; one range of keys.
    scalars = dict(batch=1, seq_len=4, tile_tokens=2, first_tile=0, tiles=1, range_keys=64,
                   chunk=16)
    # The postprocess takes one of two inputs and one of two outputs.
    absent = {"sparse_mla_postprocess": ("fixed", "lost", "dkv_f32")}
    checked = 0
    for name, kernel in sparse_mla.load_manifest().items():
        good = kernel_args(kernel, scalars, absent.get(name, ()))
        _runtime.launch(name, good, 0, 0)
        assert len(launched) == 2, name      # the good arguments launch
        launched.clear()
        for spec in kernel["args"]:
            if spec["kind"] != "memref":
                continue
            arg = spec["name"]
            if good[arg] is None:
                continue
            with_none = dict(good, **{arg: None})
            if spec["optional"]:
                # Left out, it is an empty tensor (its sizes 0 for others').
                try:
                    _runtime.pack_args(kernel, with_none)
                except sparse_mla.KernelError as e:
                    assert "required" not in str(e) and arg not in str(e), e
            else:
                with pytest.raises(sparse_mla.KernelError, match=f"argument {arg} is required"):
                    _runtime.launch(name, with_none, 0, 0)
            for d, extent in enumerate(spec["extents"]):
                if extent == "?":
                    continue
                shape = list(good[arg].shape)
                shape[d] += 1
                bad = dict(good, **{arg: torch.zeros(shape, dtype=good[arg].dtype)})
                with pytest.raises(sparse_mla.KernelError,
                                   match=f"{name}: argument {arg} must have shape"):
                    _runtime.launch(name, bad, 0, 0)
                checked += 1
        assert not launched, name
    # Every tensor of the backward states its extents but the width of its
    # keys (T * topk or topk) and of its counts (G or 1).
    bwd = next(k for n, k in sparse_mla.load_manifest().items() if n.startswith("sparse_mla_bwd"))
    anys = {(a["name"], d) for a in bwd["args"] if a["kind"] == "memref"
            for d, e in enumerate(a["extents"]) if e == "?"}
    assert anys == {("keys", 1), ("counts", 1)}
    assert checked > 100


def fwd_args(b=1, s=4, h=16, g=1, skv=8, topk=5, d_tail=64):
    return [bf16(b, s, h, 512 + d_tail), bf16(b, skv, g, 512 + d_tail),
            torch.zeros(b, s, g, topk, dtype=torch.int32)]


@pytest.mark.parametrize("pos,bad,exc,match", [
    (0, lambda t: t.float(), TypeError, "q must be torch.bfloat16"),
    (0, lambda t: t[0, 0], ValueError, "q must be"),
    (1, lambda t: t.half(), TypeError, "kv must be torch.bfloat16"),
    (1, lambda t: t[..., :512].contiguous(), ValueError, "kv must have shape"),
    (1, lambda t: t[0], ValueError, "kv must have 4 dimensions"),
    (2, lambda t: t.long(), TypeError, "indices must be torch.int32"),
    (2, lambda t: t[..., :0], ValueError, "topk >= 1"),
    (2, lambda t: t[:, :3], ValueError, "indices must have shape"),
])
def test_sparse_mla_fwd_rejects_bad_arguments(pos, bad, exc, match):
    args = fwd_args()
    args[pos] = bad(args[pos])
    with pytest.raises(exc, match=match):
        sparse_mla.sparse_mla_fwd(*args)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(d_v=256), ValueError, r"\(D, D_tail\) = \(256, 320\) is not compiled"),
    (dict(d_v=512.0), TypeError, "d_v must be an int"),
    (dict(sm_scale=float("inf")), ValueError, "sm_scale must be finite"),
    (dict(is_causal=1), TypeError, "is_causal must be a bool"),
    (dict(lse_base2=None), TypeError, "lse_base2 must be a bool"),
    (dict(token_tile=0), ValueError, "token_tile must be a positive int"),
    (dict(token_tile=16), ValueError, "token_tile = 16"),
    (dict(stats=1), TypeError, "stats must be a dict"),
    (dict(topk_length=torch.zeros(1, 3, dtype=torch.int32)), ValueError,
     "topk_length must have shape"),
    (dict(attn_sink=torch.zeros(15)), ValueError, r"attn_sink must have shape \(16,\)"),
    (dict(q_offset=-2**31), ValueError, "q_offset = -2147483648"),
    (dict(o_out=torch.zeros(1, 4, 16, 512)), TypeError, "o_out must be a torch.Tensor of "
     "torch.bfloat16"),
    (dict(o_out=bf16(1, 4, 16, 576)), ValueError, "o_out must have shape"),
    (dict(lse_out=torch.zeros(1, 4, 16, dtype=torch.float64)), TypeError, "lse_out must be"),
    (dict(lse_out=torch.zeros(4, 16)), ValueError, "lse_out must have shape"),
    (dict(lse_out=torch.zeros(1, 16, 4).transpose(1, 2)), ValueError,
     "lse_out must be contiguous"),
])
def test_sparse_mla_fwd_checks_its_options_before_launch(kw, exc, match):
    with pytest.raises(exc, match=match):
        sparse_mla.sparse_mla_fwd(*fwd_args(), **kw)


def test_sparse_mla_checks_its_own_options():
    with pytest.raises(TypeError, match="return_lse must be a bool"):
        sparse_mla.sparse_mla(*fwd_args(), return_lse=1)
    with pytest.raises(TypeError, match="deterministic must be a bool"):
        sparse_mla.sparse_mla(*fwd_args(), deterministic="yes")


def test_the_forward_launches_the_union_builder_and_its_own_kernel(monkeypatch):
    # Token tiles: the union builder, then the forward over its slots; its
    # o and lse are the call's rows, and the sink (none) an empty descriptor.
    args = fwd_args(s=8, h=16, skv=64, topk=8)
    stats = {}
    launches = recorded_launches(monkeypatch, *args, call=sparse_mla.sparse_mla_fwd,
                                 stats=stats, token_tile=4)
    assert [n for n, _, _ in launches][0].startswith("sparse_mla_union_")
    name, grid, main = launches[1]
    assert name == "sparse_mla_fwd_d512_dqk576_hp64_hw32" and stats["tile_tokens"] == 4
    assert grid == (2, 1, 1)                       # 8 tokens in tiles of 4, one head block
    assert main["sink"] == (0, (0,), (0,)) and main["bits"][1] == main["keys"][1]
    assert main["o"][1:] == ((8 * 16, 512), (512, 1)) and main["lse"][1] == (8, 16)
    assert main["lse_scale"] == 1.0 and stats["launches"] == 1
    assert "range_keys" not in main and "clock" not in main
    # Per token with a sink and a natural lse: no union, no bits or counts;
    # one CTA of 64 columns per token at 64 heads.
    args = fwd_args(s=8, h=64, skv=64, topk=8)
    sink = torch.zeros(64)
    launches = recorded_launches(monkeypatch, *args, call=sparse_mla.sparse_mla_fwd,
                                 token_tile=1, attn_sink=sink, lse_base2=False)
    [(name, grid, main)] = launches
    assert name == "sparse_mla_fwd_d512_dqk576_hp64_hw32" and grid == (8, 1, 1)
    assert main["bits"] == ABSENT and main["counts"] == ABSENT
    assert main["sink"][0] == sink.data_ptr() and main["keys"][1] == (8, 8)
    assert abs(main["lse_scale"] - 0.6931471805599453) < 1e-7


def cudnn_args(t=6, h=16, t_kv=40, topk=8, d=576):
    """cuDNN-frontend's flat MQA tensors (q [T, H, D], kv [T_kv, D], ...)."""
    return [bf16(t, h, d), bf16(t_kv, d), bf16(t, h, 512), bf16(t, h, 512), torch.zeros(t, h),
            torch.zeros(h), torch.zeros(t, topk, dtype=torch.int32)]


def test_tuple_dict_unpacks_like_cudnns():
    from sparse_mla.cudnn import TupleDict
    r = TupleDict(dq=1, dkv=2, d_sink=3)
    dq, dkv, d_sink = r
    assert (dq, dkv, d_sink) == (1, 2, 3) and r[1] == 2 and r["d_sink"] == 3
    with pytest.raises(IndexError):
        r[3]


def test_cudnn_call_maps_onto_the_backward(monkeypatch):
    # Index-only masking (not causal), a natural lse, the sink's kernels, G = 1 views of
    # kv and the indices, cuDNN's defaults; the result a dict with dkv in kv's layout.
    from sparse_mla import cudnn
    args = cudnn_args()
    result = {}

    def call(*a, **kw):
        result.update(cudnn.sparse_attention_backward_wrapper(*a, **kw))
    launches = recorded_launches(monkeypatch, *args, call=call, topk_length=torch.zeros(6,
                                 dtype=torch.int32))
    names = [n.split("_")[2] for n, _, _ in launches]
    assert names[:3] == ["preprocess", "sink", "sink"] and "bwd" in names
    main = next(a for n, _, a in launches if n.startswith("sparse_mla_bwd_"))
    assert main["causal"] == 0 and abs(main["lse_scale"] - 1.4426950408889634) < 1e-6
    assert abs(main["qk_scale"] - 576 ** -0.5 * 1.4426950408889634) < 1e-6
    assert list(result) == ["dq", "dkv", "d_sink"]
    assert result["dq"].shape == (6, 16, 576) and result["dkv"].shape == (40, 576)
    assert result["dkv"].dtype == torch.bfloat16 and result["d_sink"].shape == (16,)


@pytest.mark.parametrize("pos, bad, exc, match", [
    (0, lambda t: t.half(), TypeError, "compiled for bfloat16"),
    (0, lambda t: t[0], ValueError, r"q must be 3-D \(total_S_q, H, D\)"),
    (1, lambda t: t.unsqueeze(1), ValueError, r"kv must have shape \(total_S_kv, 576\)"),
    (5, lambda t: t[:3], ValueError, r"attn_sink must have shape \(16,\)"),
    (6, lambda t: t[:2], ValueError, r"topk_idxs must have shape \(6, topk_max\)"),
    (4, lambda t: t[:, :3], ValueError, "lse must have shape"),
])
def test_cudnn_call_rejects_what_cudnn_rejects(pos, bad, exc, match):
    from sparse_mla import cudnn
    args = cudnn_args()
    args[pos] = bad(args[pos])
    with pytest.raises(exc, match=match):
        cudnn.sparse_attention_backward_wrapper(*args)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(topk_length=torch.zeros(6, 1, dtype=torch.int32)), ValueError,
     r"topk_length must have shape \(6,\)"),
    (dict(block_tile=0), ValueError, "block_tile must be a positive int"),
    (dict(q_cluster_mode="pairs"), ValueError, "q_cluster_mode must be 'off' or 'adaptive_pair'"),
    (dict(deterministic=1), TypeError, "deterministic must be a bool"),
    (dict(dkv=torch.zeros(40, 576, dtype=torch.float16)), TypeError, "dkv must be a torch.Tensor"),
    (dict(workspace=torch.zeros(8, dtype=torch.uint8)), ValueError,
     r"requires a \d+-byte workspace, got 8 bytes"),
])
def test_cudnn_call_checks_its_options(kw, exc, match, monkeypatch):
    from sparse_mla import cudnn
    monkeypatch.setattr(cudnn, "_devices", lambda *_, **__: None)   # CPU tensors stand in
    with pytest.raises(exc, match=match):
        cudnn.sparse_attention_backward_wrapper(*cudnn_args(), **kw)


def test_cudnn_call_checks_devices_head_dim_and_contiguity_as_cudnn(monkeypatch):
    # cuDNN's words, which its own tests match: q on CUDA, the others on q's
    # device, head_dim 512 or 576, and contiguous samples for the plan.
    from sparse_mla import cudnn
    args = cudnn_args()
    with pytest.raises(ValueError, match="Q must live on CUDA"):
        cudnn.sparse_attention_backward_wrapper(*args)
    with pytest.raises(ValueError, match="Q must live on CUDA"):
        cudnn.SparseAttentionBackward(*args).check_support()
    with pytest.raises(ValueError, match="head_dim must be 512 or 576"):
        cudnn.SparseAttentionBackward(*cudnn_args(d=128)).check_support()
    kv = torch.zeros(40, 2 * 576, dtype=torch.bfloat16)[:, :576]
    strided = args[:1] + [kv] + args[2:]
    monkeypatch.setattr(cudnn, "_devices", lambda *_, **__: None)   # CPU tensors stand in
    with pytest.raises(NotImplementedError, match=r"contiguous kv; got shape .* strides"):
        cudnn.SparseAttentionBackward(*strided).check_support()


def test_cudnn_plan_object_sizes_its_workspace_and_wants_its_outputs(monkeypatch):
    from sparse_mla import cudnn
    monkeypatch.setattr(cudnn, "_devices", lambda *_, **__: None)   # CPU tensors stand in
    args = cudnn_args()
    plan = cudnn.SparseAttentionBackward(*args, deterministic=True)
    assert plan.check_support() and plan.compile() is None
    ours = sparse_mla.workspace_bytes(args[0], args[1].unsqueeze(1), args[2], args[3],
                                      args[6].unsqueeze(1), args[4], attn_sink=args[5],
                                      deterministic=True)
    assert plan.scratch_workspace_bytes() == ours
    with pytest.raises(ValueError, match="dq must be preallocated"):
        plan.execute(*args, None, torch.empty(40, 576), d_sink=torch.empty(16))
    with pytest.raises(ValueError, match="q_cluster_mode"):
        cudnn.SparseAttentionBackward(*args, q_cluster_mode="on").check_support()


def test_bwd_into_refuses_missing_required_tensors():
    args = bwd_args()
    q, kv = args[0], args[1]
    for missing in ("dq_out", "dkv_out", "workspace"):
        tensors = dict(dq_out=torch.empty_like(q), dkv_out=torch.empty(kv.shape),
                       workspace=torch.empty(64, dtype=torch.uint8), d_sink_out=None)
        tensors[missing] = None
        with pytest.raises(TypeError, match=f"bwd_into: {missing} must be a torch.Tensor"):
            sparse_mla.bwd._bwd_into_op(*args, 0.1, True, True, **tensors)


def test_the_kl_target_is_a_second_pass_per_head_block(monkeypatch):
    # 128 heads: two blocks of 64, each writing its row of slot sums; the
    # forward's lse, the sink and the lengths go to the pass.
    args = fwd_args(s=4, h=128, skv=64, topk=8)
    sink, lengths = torch.zeros(128), torch.zeros(1, 4, dtype=torch.int32)
    out = {}

    def call(*a, **kw):
        out["result"] = sparse_mla.sparse_mla_fwd(*a, **kw)
    launches = recorded_launches(monkeypatch, *args, call=call, token_tile=1,
                                 return_kl_target=True, attn_sink=sink, topk_length=lengths)
    name, grid, kl = launches[-1]
    assert name == "sparse_mla_kl_d512_dqk576_hp64_hw32" and grid == (4, 2, 1)
    assert kl["kl"][1] == (2, 4, 8) and kl["lse"][1] == (4, 128) and kl["counts"][1] == (4, 1)
    assert kl["sink"][0] == sink.data_ptr() and kl["causal"] == 1
    o, lse, target = out["result"]
    assert target.shape == (1, 4, 1, 8) and target.dtype == torch.float32
    with pytest.raises(TypeError, match="return_kl_target must be a bool"):
        sparse_mla.sparse_mla_fwd(*args, return_kl_target="yes")


def test_the_kl_target_checks_the_lse_it_is_given():
    args = fwd_args()
    with pytest.raises(ValueError, match=r"lse must have shape \(1, 4, 16\)"):
        sparse_mla.sparse_mla_kl_target(*args, torch.zeros(1, 4, 15))
    with pytest.raises(TypeError, match="lse must be torch.float32"):
        sparse_mla.sparse_mla_kl_target(*args, torch.zeros(1, 4, 16, dtype=torch.float64))
    with pytest.raises(TypeError, match="return_kl_target must be a bool"):
        sparse_mla.sparse_mla(*args, return_kl_target=None)
