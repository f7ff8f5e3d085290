"""tile.gemm on the tensor cores in the three operand arrangements of the
backward (K-major x K-major, MN-major x MN-major, K-major x MN-major), the
three swizzles (32, 64, 128 bytes) and with A in registers, against float64
products."""

import pytest
import torch

from sparse_mla import _runtime

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# Compiled by tools/build.sh next to the wheel.

@pytest.mark.parametrize("h", [16, 32, 64])
@pytest.mark.parametrize("kind", ["s", "dq", "dkv", "rega"])
def test_gemm_matches_float64(kind, h, probes):
    k = torch.randn(64, 576, device="cuda").to(torch.bfloat16)
    q = torch.randn(h, 576, device="cuda").to(torch.bfloat16)
    p = torch.randn(64, h, device="cuda").to(torch.bfloat16)
    ref = {"s": k.double() @ q.double().T,
           "dq": k.double().T @ p.double(),
           "dkv": p.double() @ q.double()[:, 64:128],
           "rega": p.double() @ q.double()[:, 64:128]}[kind]
    out = torch.full(ref.shape, float("nan"), device="cuda")
    _runtime.launch(f"probe_{kind}_h{h}", dict(k=k, q=q, p=p, c=out), 0,
                    torch.cuda.current_stream().cuda_stream, grid=[1], directory=probes)
    torch.cuda.synchronize()
    assert torch.isfinite(out).all()
    err = (out.double() - ref).norm() / ref.norm()
    assert err < 1e-6, f"relative error {err.item()}"
