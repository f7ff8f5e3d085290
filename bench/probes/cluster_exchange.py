"""What a trade through distributed shared memory costs on the GPU.

Times test/gpu/kernels/cluster_exchange_probe.mlir (built into
dist/test_kernels by tools/build.sh): 66 clusters of two CTAs, one per SM;
each round, a sending warpgroup writes a 64 x 64 f32 tile (16 KiB) into its
peer's inbox ring and arrives at the peer's `full` mbarrier, and the peer's
receiving warpgroup reads it and frees the stage remotely. With one stage a
round is the latency of a trade and its release; with 4, up to 4 are in
flight: the bandwidth of distributed shared memory between the SMs. Each
is timed with st.shared::cluster and a remote arrival (`sync`), and with
st.async stores that complete on the peer's barrier (`async`).

usage: python3 bench/probes/cluster_exchange.py [clusters] [rounds]
"""
import os
import sys
from pathlib import Path

import torch

from sparse_mla import _runtime

PROBES = Path(os.environ.get("SPARSE_MLA_TEST_KERNELS",
                             Path(__file__).resolve().parents[2] / "dist" / "test_kernels"))


def time_ms(clusters, rounds, stages, async_writes, reps=20):
    ctas = 2 * clusters
    src = torch.randint(-8, 9, (ctas * 64, 64), device="cuda").float()
    out = torch.empty_like(src)
    stream = torch.cuda.current_stream().cuda_stream
    run = lambda: _runtime.launch("cluster_exchange_probe", [ctas], [src, out, rounds, stages, async_writes], 0,
                                  stream, directory=PROBES)
    run()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main():
    clusters = int(sys.argv[1]) if len(sys.argv) > 1 else 66
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
    base = time_ms(clusters, 0, 1, 0)
    for stages, async_writes in [(s, a) for a in (0, 1) for s in (1, 2, 4)]:
        full = time_ms(clusters, rounds, stages, async_writes)
        per_round_us = (full - base) * 1e3 / rounds
        ctas = 2 * clusters
        gbs = ctas * 64 * 64 * 4 / (per_round_us * 1e-6) / 1e9
        mode = "async" if async_writes else "sync"
        print(f"{mode:5}: {clusters} clusters x 2 CTAs, {rounds} rounds, {stages} stages: {full:.3f} ms "
              f"(empty launch {base:.3f} ms); {per_round_us:.3f} us per round, "
              f"{gbs:.0f} GB/s of tiles traded ({gbs / ctas:.1f} per CTA)")


if __name__ == "__main__":
    main()
