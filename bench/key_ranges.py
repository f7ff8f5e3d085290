"""The knobs of the key-range work order (issue 26), side by side in one
process: each shape (python3 -m sparse_mla.bench's SxH or S:SkvxH, S tail
queries of Skv keys) timed with key ranges off, at their default, and at
the given keys per range; cuDNN-frontend's SM90 backward where
importable. The window (the ranges the CTAs that run together may spread
over) is a constant of the kernels' build (range_window in
kernels/sparse_mla_bwd.mlir): time another with SPARSE_MLA_KERNELS. o and lse are random but finite (the kernels' time does not
depend on their values; the forward at 128K keys would take longer than
the timing).

    python3 bench/key_ranges.py [--shapes 4096:131072x64,...] [--ranges off,auto,4096,8192]
                                [--reps 10] [--deterministic] [--out DIR]

--deterministic times deterministic=True (its accumulator is 8 bytes a column)
in place of the default.

Prints and writes (DIR/key_ranges.json) rows {Sq, Skv, H, peer, variant,
range_keys, ms, ms_per_mpair}: ms per million valid (query, key) pairs.
Ratios mean something only within one run."""
import argparse
import json
from pathlib import Path

import torch

import sparse_mla
import sparse_mla.plan as plan
from sparse_mla.bench import D, D_TAIL, parse_shape, peers, time_it
from sparse_mla.reference import causal_indices


def inputs(s, skv, h, topk, seed=1):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(s, h, D + D_TAIL, device="cuda", generator=gen).bfloat16()
    kv = torch.randn(skv, 1, D + D_TAIL, device="cuda", generator=gen).bfloat16()
    o = torch.randn(s, h, D, device="cuda", generator=gen).bfloat16()
    do = torch.randn(s, h, D, device="cuda", generator=gen).bfloat16()
    lse = torch.full((s, h), 12.0, device="cuda")
    idx = causal_indices(1, s, 1, topk, skv, generator=gen, q_offset=skv - s)[0]
    return (q, kv, o, do, idx, lse), int((idx >= 0).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096:16384x16,4096:65536x16,4096:131072x16,"
                    "4096:16384x64,4096:65536x64,4096:131072x64,32768x16,32768x64")
    ap.add_argument("--ranges", default="off,auto", help="off, auto, on or keys per range")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    cudnn = peers(False).get("cudnn_fe_sm90")
    settings = {"off": False, "auto": None, "on": True}
    rows = []
    for s, skv, h in map(parse_shape, a.shapes.split(",")):
        args, pairs = inputs(s, skv, h, a.topk)
        window = plan.constant("range_window")
        runs = [("off", False)] + [(f"{r}/w{window}", settings[r] if r in settings else int(r))
                                   for r in a.ranges.split(",") if r != "off"]
        for name, setting in runs:
            stats = {}
            ms, _ = time_it(sparse_mla.sparse_mla_bwd, args, a.reps, lse_base2=False,
                            q_offset=skv - s, key_ranges=setting, stats=stats,
                            deterministic=a.deterministic)
            rows.append(dict(Sq=s, Skv=skv, H=h, peer="sparse_mla_det" if a.deterministic
                             else "sparse_mla", variant=name,
                             range_keys=stats["range_keys"], ms=ms, ms_per_mpair=ms / pairs * 1e6))
            print(json.dumps(rows[-1]), flush=True)
        if cudnn is not None:
            ms, _ = time_it(cudnn, args, a.reps)
            rows.append(dict(Sq=s, Skv=skv, H=h, peer="cudnn_fe_sm90", variant="", ms=ms,
                             ms_per_mpair=ms / pairs * 1e6))
            print(json.dumps(rows[-1]), flush=True)
        del args
        torch.cuda.empty_cache()
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        Path(a.out, "key_ranges.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
