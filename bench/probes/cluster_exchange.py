"""What a trade through distributed shared memory costs on the GPU.

Times test/gpu/kernels/cluster_exchange_probe.mlir (built into
dist/test_kernels by tools/build.sh): 66 clusters of two CTAs, one per SM,
each round a CTA writes a 64 x 64 f32 tile (16 KiB) into its peer's shared
memory and waits for the peer's, with the full/free mbarrier hand-over the
pair backward needs. One round is a write, a remote arrival, the peer's
matching half and a read: the latency of a trade, with nothing to hide it.

usage: python3 bench/probes/cluster_exchange.py [clusters] [rounds]
"""
import os
import sys
from pathlib import Path

import torch

from sparse_mla import _runtime

PROBES = Path(os.environ.get("SPARSE_MLA_TEST_KERNELS",
                             Path(__file__).resolve().parents[2] / "dist" / "test_kernels"))


def time_ms(clusters, rounds, reps=20):
    ctas = 2 * clusters
    src = torch.randint(-8, 9, (ctas * 64, 64), device="cuda").float()
    out = torch.empty_like(src)
    stream = torch.cuda.current_stream().cuda_stream
    run = lambda: _runtime.launch("cluster_exchange_probe", [ctas], [src, out, rounds], 0,
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
    base = time_ms(clusters, 0)
    full = time_ms(clusters, rounds)
    per_round_us = (full - base) * 1e3 / rounds
    ctas = 2 * clusters
    gbs = ctas * 64 * 64 * 4 / (per_round_us * 1e-6) / 1e9
    print(f"{clusters} clusters x 2 CTAs, {rounds} rounds: {full:.3f} ms "
          f"(empty launch {base:.3f} ms); {per_round_us:.3f} us per round, "
          f"{gbs:.0f} GB/s of tiles traded ({gbs / ctas:.1f} per CTA)")


if __name__ == "__main__":
    main()
