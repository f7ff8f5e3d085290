"""tile.warp_specialize, mbarriers and a scoped barrier on a GPU
(test/gpu/kernels/warp_specialize_probe.mlir): a producer warpgroup gathers
rows through a two-stage ring, a consumer warpgroup writes them out; every
row must arrive once, in its place, for any number of blocks."""

import pytest
import torch

from sparse_mla import _runtime

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("n", [1, 64, 130, 1000])
def test_producer_and_consumer_hand_over_every_block(n, probes):
    g = torch.Generator(device="cuda").manual_seed(n)
    src = torch.randn(777, 64, device="cuda", generator=g).to(torch.bfloat16)
    idx = torch.randint(-1, 777, (n,), device="cuda", generator=g, dtype=torch.int32)
    out = torch.full((n, 64), float("nan"), device="cuda")
    _runtime.launch("warp_specialize_probe", dict(src=src, idx=idx, out=out, n=n), 0,
                    torch.cuda.current_stream().cuda_stream, grid=[1], directory=probes)
    torch.cuda.synchronize()
    ref = torch.where((idx >= 0)[:, None], src[idx.clamp(min=0).long()].float(),
                      torch.zeros((), device="cuda"))
    assert torch.equal(out, ref)
