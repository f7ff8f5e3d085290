#!/usr/bin/env python3
"""A/B of kernel builds in one process, interleaved call by call: each round
times one backward call of every build in turn (CUDA events, the order
rotated each round), so that clock and thermal drift, which moves whole
runs by 5-10% on the lent machines, falls on all builds alike. Reports each
build's median and the median of its per-round ratio to the first build.

  python3 bench/interleave.py A=DIR B=DIR [--shapes 4096x64,4096x16] [--rounds 30]

DIR is the `kernels` folder of a build (a wheel's sparse_mla/kernels, or
bundle/sparse_mla/kernels). The installed package's Python layer and
runtime launch every build, so the builds must share the kernels' ABI
(names, arguments, grid). `--per-token` adds the T = 1 call at H <= 32.
"""
import argparse
import os
import statistics

import torch

import sparse_mla
from sparse_mla.bench import make_inputs


def call(args, kernels, **kwargs):
    os.environ["SPARSE_MLA_KERNELS"] = kernels
    return sparse_mla.sparse_mla_bwd(*args, lse_base2=False, **kwargs)


def interleave(calls, rounds):
    """{name: [ms per round]} of the calls (name -> a function of no
    arguments that launches one backward), called in turn."""
    names = list(calls)
    for name in names:  # load and warm every build
        for _ in range(2):
            calls[name]()
    torch.cuda.synchronize()
    times = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            # The GPU sleeps while the host queues the call: the events
            # time the kernels, not the launches.
            torch.cuda._sleep(5_000_000)
            start.record()
            calls[name]()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end))
    return times


def report(times, base):
    """Each call's median and the median of its per-round ratio to `base`."""
    med = {n: statistics.median(t) for n, t in times.items()}
    ratios = [statistics.median(x / y for x, y in zip(times[n], times[base]))
              for n in times if n != base]
    return (" | ".join(f"{med[n]:.3f}" for n in times) + " | "
            + " | ".join(f"{r:.3f}" for r in ratios))


def parser(doc, shapes, rounds):
    """The options of an interleaved run: shapes, topk, pattern, rounds."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--shapes", default=shapes)
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--pattern", default="random")
    ap.add_argument("--rounds", type=int, default=rounds)
    return ap


def main():
    ap = parser(__doc__, "4096x64,16384x64,4096x16,16384x16", 30)
    ap.add_argument("builds", nargs="+", help="NAME=KERNELS_DIR; the first is the base")
    ap.add_argument("--per-token", action="store_true")
    a = ap.parse_args()
    builds = dict(b.split("=", 1) for b in a.builds)
    for name, path in builds.items():
        if not os.path.isdir(path):
            ap.error(f"build {name}: no folder {path}")
    base = next(iter(builds))
    print(f"{torch.cuda.get_device_name()}, {a.rounds} rounds, topk {a.topk}, {a.pattern}")
    print("| S | H | T | " + " | ".join(f"{n} ms" for n in builds) + " | "
          + " | ".join(f"{n} / {base}" for n in builds if n != base) + " |")
    for shape in a.shapes.split(","):
        s, h = map(int, shape.split("x"))
        args = make_inputs(s, h, a.topk, a.pattern)
        tiles = [None] + ([1] if a.per_token and h <= 32 else [])
        for tile in tiles:
            calls = {n: (lambda d=d: call(args, d, token_tile=tile)) for n, d in builds.items()}
            times = interleave(calls, a.rounds)
            print(f"| {s} | {h} | {tile or 'auto'} | {report(times, base)} |", flush=True)


if __name__ == "__main__":
    main()
