"""Argument checks and the kernel ABI, without a GPU."""
import ctypes
import ctypes.util

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
    assert [a["rank"] for a in post["args"]] == [2, 2, 2]
    assert [a["dtype"] for a in post["args"]] == ["f32", "bf16", "f32"]


def test_memrefs_are_passed_as_descriptors():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    ws = torch.zeros(5, 24)
    out = torch.zeros(5, 24, dtype=torch.bfloat16)
    values = _runtime.pack_args(kernel, [ws, out, ws[:0]])
    assert len(values) == 3 * (3 + 2 + 2)
    assert values[0].value == values[1].value == ws.data_ptr()
    assert [v.value for v in values[2:7]] == [0, 5, 24, 24, 1]
    assert values[7].value == out.data_ptr()


def test_wrong_rank_for_the_abi_is_rejected():
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    with pytest.raises(sparse_mla.KernelError, match="rank 2"):
        _runtime.pack_args(kernel, [torch.zeros(3), torch.zeros(3), torch.zeros(3)])
    with pytest.raises(sparse_mla.KernelError, match="takes 3 arguments"):
        _runtime.pack_args(kernel, [torch.zeros(3, 8)])


@pytest.mark.parametrize("bad, match", [
    (lambda o, do: ("x", do), "o must be a torch.Tensor"),
    (lambda o, do: (o.float(), do), "o must be torch.bfloat16"),
    (lambda o, do: (o, do.half()), "do must be torch.bfloat16"),
    (lambda o, do: (o, do[:8]), "do must have the shape of o"),
    (lambda o, do: (o.t(), do.t()), "o must be contiguous"),
    (lambda o, do: (o[:, :12].contiguous(), do[:, :12].contiguous()), "multiple of 8"),
    (lambda o, do: (o, do), "o must be on a CUDA device"),
])
def test_preprocess_rejects_bad_arguments(bad, match):
    o, do = bf16(16, 16), bf16(16, 16)
    with pytest.raises((TypeError, ValueError), match=match):
        sparse_mla.preprocess(*bad(o, do))


def test_postprocess_rejects_bad_arguments():
    with pytest.raises(TypeError, match="ws must be torch.float32"):
        sparse_mla.postprocess(bf16(4, 16))
    with pytest.raises(ValueError, match="multiple of 16"):
        sparse_mla.postprocess(torch.zeros(4, 8))
    with pytest.raises(ValueError, match="ws must be contiguous"):
        sparse_mla.postprocess(torch.zeros(8, 32)[:, ::2])
    with pytest.raises(TypeError, match="out must be a torch.bfloat16 or torch.float32"):
        sparse_mla.postprocess(torch.zeros(4, 16), out=torch.zeros(4, 16, dtype=torch.int32))
    with pytest.raises(ValueError, match="out must have shape"):
        sparse_mla.postprocess(torch.zeros(4, 16), out=torch.zeros(4, 32))
    ws = torch.zeros(4, 16)
    with pytest.raises(ValueError, match="out must not be ws"):
        sparse_mla.postprocess(ws, out=ws)
    with pytest.raises(ValueError, match="ws must be on a CUDA device"):
        sparse_mla.postprocess(torch.zeros(4, 16))


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
    kernel = sparse_mla.load_manifest()["sparse_mla_postprocess"]
    ws, out = torch.zeros(4, 16), torch.zeros(4, 16, dtype=torch.bfloat16)
    with pytest.raises(sparse_mla.KernelError, match="cannot open the CUDA driver"):
        _runtime.launch("sparse_mla_postprocess", [1], [ws, out, ws[:0]], 0, 0)


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
    (0, lambda t: t.transpose(1, 2).contiguous().transpose(1, 2), ValueError,
     "q must be contiguous"),
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


def test_sparse_mla_bwd_checks_the_device_last():
    with pytest.raises(ValueError, match="q must be on a CUDA device"):
        sparse_mla.sparse_mla_bwd(*bwd_args())
    with pytest.raises(ValueError, match="q must be on a CUDA device"):
        sparse_mla.sparse_mla_bwd(*[t[0] for t in bwd_args()])  # un-batched


def test_variants_are_compiled_for_each_supported_shape():
    kernels = sparse_mla.load_manifest()
    assert sparse_mla.bwd.supported_dims() == [(512, 64), (512, 0)]
    for d_v, d_tail in sparse_mla.bwd.supported_dims():
        for columns, per_cta in [(1, 32), (16, 32), (32, 32), (33, 64), (64, 64), (128, 64)]:
            name, n = sparse_mla.bwd.select_variant(columns, d_v, d_tail)
            assert n == per_cta
            k = kernels[name]
            # Warpgroup 1 keeps the dQ^T rows past the first 256 and the
            # dKV columns past the first 128.
            assert k["params"] == {"hw": per_cta // 2, "hp": per_cta, "d": d_v,
                                   "dqk": d_v + d_tail, "dq1": d_v + d_tail - 256,
                                   "dk1": d_v + d_tail - 128, "dv1": d_v - 128}
            assert k["threads"] == 256 and k["shared_bytes"] <= 232448 - 16
    with pytest.raises(sparse_mla.KernelError, match="no compiled backward for D=256"):
        sparse_mla.bwd.select_variant(16, 256, 64)


@pytest.mark.parametrize("heads, seq, kv, topk, tokens", [
    (8, 4096, 4096, 2048, 8),      # GLM-5.1 at TP 8: 8 x 8 columns
    (16, 4096, 4096, 2048, 4),     # 4 x 16
    (24, 4096, 4096, 2048, 2),     # 2 x 24 of 64 columns
    (32, 4096, 4096, 2048, 2),
    (33, 4096, 4096, 2048, 1),     # more than half a CTA: per token
    (64, 4096, 4096, 2048, 1),
    (128, 4096, 4096, 2048, 1),
    (1, 4096, 4096, 2048, 8),
    (16, 3, 4096, 2048, 2),        # no more tokens than a row has
    (16, 1, 4096, 2048, 1),
    (8, 4096, 4096, 4096, 4),      # T * topk within the largest builder
    (16, 4096, 4096, 16384, 1),
    (16, 4096, 262144, 2048, 4),   # the largest bitmap: 8192 words
    (16, 4096, 262145, 2048, 1),
])
def test_tile_tokens_by_shape(heads, seq, kv, topk, tokens):
    assert sparse_mla.bwd.tile_tokens(heads, seq, kv, topk) == tokens


def test_union_builder_variants_cover_the_tiles():
    for kv, slots, found in [(32768, 8192, "cap8192_nb1024"), (32769, 8192, "cap8192_nb8192"),
                             (100, 8193, "cap16384_nb1024"), (262145, 8, None)]:
        name = sparse_mla.bwd.select_union(kv, slots)
        assert (name is None) if found is None else name.endswith(found)


@pytest.mark.parametrize("tile, match", [
    (0, "token_tile must be a positive int"), (2.0, "positive int"), (True, "positive int"),
    (16, "at most 8 tokens"), (8, "at most 8 tokens of 16 heads"),
])
def test_token_tile_is_checked(tile, match):
    with pytest.raises(ValueError, match=match):
        sparse_mla.bwd.tile_tokens(16, 4096, 4096, 2048, tile)
    with pytest.raises(ValueError, match="no union builder for Skv = 300000"):
        sparse_mla.bwd.tile_tokens(16, 4096, 300000, 2048, 2)
    assert sparse_mla.bwd.tile_tokens(16, 4096, 300000, 2048, 1) == 1
