#!/usr/bin/env python3
"""Benchmark of the whole sparse-MLA backward (preprocess, main kernel,
postprocess) with the protocol of DESIGN.md section 6: B=1, G=1, D=512,
D_tail=64, topk=2048, S=Skv, causal indices from reference.causal_indices,
o and lse from a real forward; CUDA events, warm-up, median of many
repetitions with an L2 flush before each; the float32 PyTorch reference
timed in the same run. Prints a table and writes it as JSON.

usage: bench_bwd.py [--seq 2048,4096,...] [--heads 16,32,...] [--out FILE]
"""
import argparse
import datetime
import json
import statistics
import subprocess
from pathlib import Path

import torch

import sparse_mla
from sparse_mla.reference import (causal_indices, sparse_mla_bwd_reference,
                                  sparse_mla_fwd_reference)


def flops(s, h, topk, dqk=576, dv=512):
    return 2 * s * h * topk * (3 * dqk + 2 * dv)


def timed(fn, reps, flush):
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", default="2048,4096,8192,16384")
    ap.add_argument("--heads", default="16,32,64,128")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ref-reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--commit", default=None, help="recorded in the JSON (default: git HEAD)")
    a = ap.parse_args()
    flush = torch.empty(256 * 2**20 // 4, device="cuda")  # > the 60 MB L2
    gen = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for s in map(int, a.seq.split(",")):
        idx = causal_indices(1, s, 1, a.topk, generator=gen)
        kv = torch.randn(1, s, 1, 576, device="cuda", generator=gen).bfloat16()
        for h in map(int, a.heads.split(",")):
            q = torch.randn(1, s, h, 576, device="cuda", generator=gen).bfloat16()
            o, lse = sparse_mla_fwd_reference(q, kv, idx, dtype=torch.float32)
            do = torch.randn(o.shape, device="cuda", generator=gen).bfloat16()
            args = (q, kv, o, do, idx, lse)
            run = lambda: sparse_mla.sparse_mla_bwd(*args)
            for _ in range(3):
                run()
            ms = timed(run, a.reps, flush)
            ref = lambda: sparse_mla_bwd_reference(*args, dtype=torch.float32)
            ref()
            ref_ms = timed(ref, a.ref_reps, flush)
            tf = flops(s, h, a.topk) / ms / 1e9
            rows.append(dict(S=s, H=h, topk=a.topk, ms=round(ms, 4), tflops=round(tf, 1),
                             reference_ms=round(ref_ms, 2),
                             speedup_vs_reference=round(ref_ms / ms, 1)))
            print(f"S={s:6d} H={h:4d}  {ms:9.3f} ms  {tf:6.1f} TFLOP/s  "
                  f"reference {ref_ms:9.1f} ms  x{ref_ms / ms:7.1f}", flush=True)
            del q, o, do, lse
        del idx, kv
    commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True,
                                        cwd=Path(__file__).parent).stdout.strip()
    result = dict(date=datetime.date.today().isoformat(), commit=commit,
                  device=torch.cuda.get_device_name(), command="python3 bench/bench_bwd.py "
                  f"--seq {a.seq} --heads {a.heads} --topk {a.topk} --reps {a.reps}",
                  protocol="DESIGN.md section 6", rows=rows)
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
