"""tile.convert_layout on a GPU (test/gpu/kernels/convert_layout_probe.mlir):
each warpgroup converts 64-row blocks from a coalesced layout to the wgmma
accumulator's and back through its shared scratch; every element must land
in its place, through both conversions, for any number of rows."""

import pytest
import torch

from sparse_mla import _runtime

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("rows", [1, 64, 100, 1000])
def test_conversions_keep_every_element_in_place(rows, probes):
    g = torch.Generator(device="cuda").manual_seed(rows)
    src = torch.randn(rows, 64, device="cuda", generator=g)
    mma_out = torch.full_like(src, float("nan"))
    back_out = torch.full_like(src, float("nan"))
    _runtime.launch("convert_layout_probe",
                    dict(src=src, mma_out=mma_out, back_out=back_out), 0,
                    torch.cuda.current_stream().cuda_stream, grid=[1], directory=probes)
    torch.cuda.synchronize()
    assert torch.equal(mma_out, src + 1)
    assert torch.equal(back_out, src + 1)
