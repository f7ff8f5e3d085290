"""Clusters on a GPU (test/gpu/kernels/cluster_exchange_probe.mlir): the two
CTAs of each cluster trade a 64 x 64 f32 tile through distributed shared
memory, round after round, a sending warpgroup of each handing it over to
the peer's receiving one through a ring of inbox stages and each other's
mbarriers, with st.shared::cluster and a remote arrival or with st.async
completing on the peer's barrier. Each CTA must end with the sum of every
round its peer sent, exactly, whatever the number of stages in flight."""

import pytest
import torch

from sparse_mla import _runtime


def exchange(probes, clusters, rounds, stages, async_writes, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    ctas = 2 * clusters
    # Small integers: every partial sum is exact in f32.
    src = torch.randint(-8, 9, (ctas * 64, 64), device="cuda", generator=g).float()
    out = torch.full_like(src, float("nan"))
    args = dict(src=src, out=out, rounds=rounds, stages=stages, async_writes=async_writes)
    _runtime.launch("cluster_exchange_probe", args, 0, torch.cuda.current_stream().cuda_stream,
                    grid=[ctas], directory=probes)
    torch.cuda.synchronize()
    peer = src.view(ctas, 64, 64)[torch.arange(ctas, device="cuda") ^ 1]
    return out.view(ctas, 64, 64), peer * (rounds * (rounds + 1) // 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("clusters,rounds,stages",
                         [(1, 0, 1), (1, 1, 1), (3, 7, 2), (66, 300, 1), (66, 301, 4),
                          (200, 33, 3)])
@pytest.mark.parametrize("async_writes", [0, 1])
def test_cluster_pairs_trade_tiles_every_round(clusters, rounds, stages, async_writes, probes):
    out, want = exchange(probes, clusters, rounds, stages, async_writes, seed=clusters * 1000 + rounds)
    assert torch.equal(out, want)


def test_a_grid_of_part_of_a_cluster_is_rejected(probes):
    src = torch.zeros(3 * 64, 64)
    with pytest.raises(_runtime.KernelError, match="clusters of 2 CTAs along x"):
        _runtime.launch("cluster_exchange_probe",
                        dict(src=src, out=src, rounds=1, stages=1, async_writes=0), 0, 0,
                        grid=[3], directory=probes)
