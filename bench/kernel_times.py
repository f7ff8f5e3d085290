"""GPU time of each kernel of one call of ours (the backward, the forward, the
forward with its KL target, or a training step), from torch.profiler (CUDA
activities), averaged over repetitions: which launch a slowdown lives in, and
what share the union builder takes. Works with any installed build that has
the pass (the bench's own calls, sparse_mla.bench.peers).

    python3 bench/kernel_times.py [--pass bwd|fwd|kl|step] [--shapes 2048x16,8192x16]
        [--patterns random] [--reps 20]
"""
import argparse
import collections

import torch
from torch.profiler import ProfilerActivity, profile

import sparse_mla
from sparse_mla.bench import make_inputs, peers

# The bench's call of ours for each pass ("kl": the forward with its KL target).
CALLS = {"bwd": ("bwd", "sparse_mla"), "fwd": ("fwd", "sparse_mla"),
         "kl": ("fwd", "with_kl_target"), "step": ("step", "sparse_mla")}


def kernel_times(s, h, topk, reps, pattern="random", pass_="bwd", **kwargs):
    """{kernel name: mean us per call} of our `pass_` at S=Skv=s, H=h."""
    bench_pass, name = CALLS[pass_]
    call = peers(False, pass_=bench_pass)[name]
    args = make_inputs(s, h, topk, pattern)
    for _ in range(3):
        call(*args, **kwargs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            call(*args, **kwargs)
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
    ap.add_argument("--pass", dest="pass_", default="bwd", choices=sorted(CALLS))
    a = ap.parse_args()
    print(f"sparse_mla {sparse_mla.__version__} on {torch.cuda.get_device_name()}")
    for pattern in a.patterns.split(","):
        for shape in a.shapes.split(","):
            s, h = map(int, shape.split("x"))
            times = kernel_times(s, h, a.topk, a.reps, pattern, a.pass_)
            print(f"{a.pass_} {pattern} S={s} H={h}: {sum(times.values()):.0f} us of kernels")
            for name, us in times.items():
                print(f"  {us:9.1f} us  {name[:90]}")


if __name__ == "__main__":
    main()
