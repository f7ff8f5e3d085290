"""The preprocess and postprocess kernels on a GPU against float64 references,
on fresh random inputs with poisoned outputs."""
import pytest
import torch

import sparse_mla

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("shape", [(1, 64, 16, 512), (2, 37, 16, 512), (3, 5, 7, 512),
                                   (1, 1, 1, 8), (130, 72), (2, 3, 1000, 520), (65, 64)])
def test_preprocess_matches_float64(shape):
    g = torch.Generator(device="cuda").manual_seed(hash(shape) % 2**31)
    o = torch.randn(shape, device="cuda", generator=g).to(torch.bfloat16)
    do = torch.randn(shape, device="cuda", generator=g).to(torch.bfloat16)
    out = torch.full(shape[:-1], float("nan"), device="cuda")
    sparse_mla.preprocess(o, do, out=out)
    torch.cuda.synchronize()
    ref = (o.double() * do.double()).sum(-1)
    scale = (o.double().abs() * do.double().abs()).sum(-1)
    assert torch.isfinite(out).all(), "some rows were not written"
    err = (out.double() - ref).abs()
    assert (err <= 2e-6 * scale + 1e-6).all(), f"max error {err.max().item()}"


def interleave(x):
    """x with its columns in the workspace order: column 8h + 2q + e of each
    group of 16 at 4q + 2h + e."""
    g = x.reshape(*x.shape[:-1], x.shape[-1] // 16, 2, 4, 2)  # (group, h, q, e)
    return g.transpose(-3, -2).reshape(x.shape).contiguous()


def test_interleave_puts_pairs_of_both_halves_together():
    cols = interleave(torch.arange(16))
    assert cols.tolist() == [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15]


@pytest.mark.parametrize("shape", [(4096, 576), (100, 576), (3, 7, 64), (1, 16), (77, 528)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_postprocess_restores_the_column_order(shape, dtype):
    x = torch.randn(shape, device="cuda") * 100
    out = torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    sparse_mla.postprocess(interleave(x), out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, x.to(dtype))
