#!/usr/bin/env python3
"""sparse_mla next to NVIDIA's cuDNN-frontend SM90 DSA backward, timed in one
process on the same inputs: the protocol, index patterns, input generation
and timing of ../shared/peers/bench_peers.py (imported from $PEERS_BIN, the
folder that holds it), with two entries for this project:
  sparse_mla      the default, with token tiles where they apply
  sparse_mla_t1   token_tile=1: the per-token kernel, the baseline that
                  token tiles must not fall behind (only at shapes that tile)
Rows (JSON lines, and --out): {"kind": "time", "peer", "S", "H", "topk",
"pattern", "ms", "ms_min", "tflops", "tile_tokens"}; ratios to cuDNN are only
meaningful within one run.

  PEERS_BIN=... python3 bench/side_by_side.py --shapes 4096x16,4096x64 \\
      --pattern correlated --out res.json
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, os.environ.get("PEERS_BIN", str(Path(__file__).parents[2] / "shared/peers")))
import bench_peers as bp  # noqa: E402

import sparse_mla  # noqa: E402


def ours(token_tile):
    def run(q, kv, o, do, idx, lse, scale):
        return sparse_mla.sparse_mla_bwd(q, kv, o, do, idx[:, None, :], lse, sm_scale=scale,
                                         lse_base2=False, token_tile=token_tile)
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True, help="SxH,...")
    ap.add_argument("--pattern", default="random", choices=["random", "correlated"])
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--no-per-token", action="store_true", help="skip sparse_mla_t1")
    ap.add_argument("--out", default="")
    ap.add_argument("--commit", default=None, help="recorded in the JSON (default: git HEAD)")
    a = ap.parse_args()
    peers = {"sparse_mla": ours(None)}
    if not a.no_per_token:
        peers["sparse_mla_t1"] = ours(1)
    cudnn = bp.peers("").get("cudnn_fe_sm90")
    if cudnn:
        peers["cudnn_fe_sm90"] = cudnn
    print("device", torch.cuda.get_device_name(), "peers", list(peers), flush=True)
    rows = []
    for shape in a.shapes.split(","):
        s, h = map(int, shape.split("x"))
        inp = bp.make(s, h, a.topk, seed=1, pattern=a.pattern)
        flops = 2 * s * h * a.topk * (3 * bp.DQK + 2 * bp.D)
        tiles = sparse_mla.bwd.tile_tokens(h, s, s, a.topk)
        for name, fn in peers.items():
            if name == "sparse_mla_t1" and tiles == 1:
                continue  # the same call as sparse_mla
            t0 = time.time()
            try:
                med, low = bp.time_it(fn, inp, a.reps)
                row = dict(kind="time", peer=name, S=s, H=h, topk=a.topk, pattern=a.pattern,
                           ms=med, ms_min=low, tflops=flops / med / 1e9,
                           wall_s=round(time.time() - t0, 1))
                if name.startswith("sparse_mla"):
                    row["tile_tokens"] = 1 if name == "sparse_mla_t1" else tiles
            except Exception as e:  # a failing peer is a row, not the end of the run
                row = dict(kind="time", peer=name, S=s, H=h, topk=a.topk, pattern=a.pattern,
                           error=repr(e)[:300])
            print(json.dumps(row), flush=True)
            rows.append(row)
            torch.cuda.empty_cache()
        del inp
    commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True,
                                        cwd=Path(__file__).parent).stdout.strip()
    if a.out:
        Path(a.out).write_text(json.dumps(dict(
            date=datetime.date.today().isoformat(), commit=commit,
            device=torch.cuda.get_device_name(),
            command="python3 bench/side_by_side.py " + " ".join(sys.argv[1:]),
            protocol="DESIGN.md section 6, ../shared/peers/bench_peers.py", rows=rows),
            indent=1) + "\n")


if __name__ == "__main__":
    main()
