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


@pytest.mark.parametrize("shape", [(4096, 576), (100, 576), (3, 7, 64), (1, 8), (77, 520)])
def test_postprocess_rounds_to_bf16(shape):
    ws = torch.randn(shape, device="cuda") * 100
    out = torch.full(shape, float("nan"), device="cuda", dtype=torch.bfloat16)
    sparse_mla.postprocess(ws, out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, ws.to(torch.bfloat16))
