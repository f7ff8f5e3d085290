"""Where the time of a short backward call goes: the host's Python per call,
the wall clock of a call as the benchmark times it (CUDA events after an L2
flush) and the GPU time of its kernels (torch.profiler); wall minus kernels
is the time the GPU waited for the host; and when, in host time from a
call's entry, each of its kernels is launched. Works with any installed
build.

    python3 bench/host_time.py [--shapes 2048x16,4096x16] [--reps 50]
    python3 bench/host_time.py --cpu     # no GPU: the C runtime, the device
                                         # checks and workspace zeroing stubbed
    python3 bench/host_time.py --profile 25   # and the host's top functions
"""
import argparse
import cProfile
import pstats
import time

import torch

import sparse_mla
from sparse_mla import _runtime, bwd


def host_us(args, reps, rounds=5):
    """Microseconds of host time per call, the calls issued back to back
    (the least of `rounds` rounds of `reps` calls)."""
    best = float("inf")
    for _ in range(rounds):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            sparse_mla.sparse_mla_bwd(*args, lse_base2=False)
        best = min(best, time.perf_counter() - t0)
    return best / reps * 1e6


class Timeline:
    """The C runtime, noting the host time of each launch since `start`."""

    def __init__(self, library):
        self.library, self.start, self.marks = library, 0.0, []

    def __getattr__(self, name):
        return getattr(self.library, name)

    def smla_launch(self, *args):
        self.marks.append(time.perf_counter() - self.start)
        return self.library.smla_launch(*args)


def timeline(args, reps):
    """Mean host microseconds from a call's entry to each of its launches
    and to its return."""
    original = _runtime._library
    clock = Timeline(original())
    _runtime._library = lambda: clock
    calls = []
    try:
        for _ in range(reps):
            clock.marks = []
            clock.start = time.perf_counter()
            sparse_mla.sparse_mla_bwd(*args, lse_base2=False)
            calls.append(clock.marks + [time.perf_counter() - clock.start])
    finally:
        _runtime._library = original
    return [sum(c[i] for c in calls) / len(calls) * 1e6 for i in range(len(calls[0]))]


def stub_device():
    """Run the call's Python on CPU tensors: launches reach a C library
    that does nothing, device checks pass, zeroing is skipped (on a GPU it
    is one asynchronous memset)."""
    class Library:
        def smla_get_kernel(self, *a):
            return 0

        def smla_launch(self, *a):
            return 0
    _runtime._library = lambda: Library()
    sparse_mla.checks.check_devices = lambda **_: None
    bwd.stream_of = sparse_mla.ops.stream_of = lambda device: 0
    _runtime.resident_ctas = lambda name, device: 132
    torch.Tensor.zero_ = lambda self: self


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="2048x16,4096x16,2048x64")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="print the N functions of most host time per shape (cProfile)")
    a = ap.parse_args()
    where = "cpu (stubbed)" if a.cpu else torch.cuda.get_device_name()
    print(f"sparse_mla {sparse_mla.__version__} on {where}")
    if a.cpu:
        stub_device()
    for shape in a.shapes.split(","):
        s, h = map(int, shape.split("x"))
        if a.cpu:
            args = _cpu_inputs(s, h, a.topk)
            print(f"S={s} H={h}: host {host_us(args, a.reps):.0f} us a call; launches at "
                  f"{_marks(timeline(args, a.reps))}")
            profile(args, a.reps, a.profile)
            continue
        from sparse_mla.bench import make_inputs, time_it
        from kernel_times import kernel_times
        args = make_inputs(s, h, a.topk, "random")
        host = host_us(args, a.reps)
        call = lambda *x: sparse_mla.sparse_mla_bwd(*x, lse_base2=False)  # noqa: E731
        wall = time_it(call, args, a.reps)[0] * 1e3
        kernels = sum(kernel_times(s, h, a.topk, a.reps).values())
        print(f"S={s} H={h}: host {host:.0f} us a call, wall {wall:.0f} us, kernels "
              f"{kernels:.0f} us, GPU waiting {wall - kernels:.0f} us; launches at "
              f"{_marks(timeline(args, a.reps))}")
        profile(args, a.reps, a.profile)


def _marks(marks):
    return ", ".join(f"{m:.0f}" for m in marks[:-1]) + f" us, returns at {marks[-1]:.0f} us"


def profile(args, reps, top):
    if not top:
        return
    with cProfile.Profile() as prof:
        for _ in range(reps):
            sparse_mla.sparse_mla_bwd(*args, lse_base2=False)
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def _cpu_inputs(s, h, topk, d_v=512, d_tail=64):
    q = torch.randn(s, h, d_v + d_tail).bfloat16()
    kv = torch.randn(s, 1, d_v + d_tail).bfloat16()
    o, do = torch.randn(s, h, d_v).bfloat16(), torch.randn(s, h, d_v).bfloat16()
    idx = torch.randint(0, s, (s, 1, topk), dtype=torch.int32)
    return q, kv, o, do, idx, torch.randn(s, h)


if __name__ == "__main__":
    main()
