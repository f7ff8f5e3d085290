"""GPU time of each kernel of one backward call, from torch.profiler (CUDA
activities), averaged over repetitions: which launch a slowdown lives in.
Works with any installed build of the package (it calls sparse_mla_bwd only).

    python3 bench/kernel_times.py [--shapes 2048x16,8192x16] [--patterns random] [--reps 20]
"""
import argparse
import collections

import torch
from torch.profiler import ProfilerActivity, profile

import sparse_mla
from sparse_mla.bench import make_inputs


def kernel_times(s, h, topk, reps, pattern="random", **kwargs):
    """{kernel name: mean us per call} of sparse_mla_bwd at S=Skv=s, H=h."""
    args = make_inputs(s, h, topk, pattern)
    for _ in range(3):
        sparse_mla.sparse_mla_bwd(*args, lse_base2=False, **kwargs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            sparse_mla.sparse_mla_bwd(*args, lse_base2=False, **kwargs)
        torch.cuda.synchronize()
    total = collections.defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total[e.name] += e.device_time / reps
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="2048x16,8192x16")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--patterns", default="random")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    print(f"sparse_mla {sparse_mla.__version__} on {torch.cuda.get_device_name()}")
    for pattern in a.patterns.split(","):
        for shape in a.shapes.split(","):
            s, h = map(int, shape.split("x"))
            times = kernel_times(s, h, a.topk, a.reps, pattern)
            print(f"{pattern} S={s} H={h}: {sum(times.values()):.0f} us of kernels")
            for name, us in times.items():
                print(f"  {us:9.1f} us  {name[:90]}")


if __name__ == "__main__":
    main()
