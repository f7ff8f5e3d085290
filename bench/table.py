#!/usr/bin/env python3
"""Writes the markdown table of side-by-side runs (bench/side_by_side.py):
sparse_mla, its per-token kernel and cuDNN-frontend SM90, timed in one run.

usage: table.py RUN.json [RUN.json ...] > RUN.md   (one file per pattern)
"""
import json
import sys


def main():
    runs = [json.load(open(p)) for p in sys.argv[1:]]
    first = runs[0]
    print(f"# Sparse-MLA backward next to cuDNN-frontend SM90, {first['device']}, "
          f"{first['date']}, commit {first['commit']}\n")
    print("Protocol: DESIGN.md section 6 (../shared/peers/bench_peers.py), topk 2048, times "
          "are medians in ms. `T` is the token tile sparse_mla chose; `per token` is "
          "token_tile=1 (today's kernel before tiles), timed only where T > 1. Ratios are "
          "within one run.")
    for run in runs:
        rows = {}
        for r in run["rows"]:
            if "ms" in r:
                rows.setdefault((r["S"], r["H"]), {})[r["peer"]] = r
        pattern = run["rows"][0]["pattern"]
        print(f"\n## Pattern `{pattern}`\n\n`{run['command']}`\n")
        print("| S | H | T | ours ms | TFLOP/s | per token ms | cuDNN ms | x cuDNN | x per token |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (s, h), peers in sorted(rows.items()):
            ours = peers["sparse_mla"]
            t1 = peers.get("sparse_mla_t1", {}).get("ms")
            cd = peers.get("cudnn_fe_sm90", {}).get("ms")
            cells = [s, h, ours.get("tile_tokens", "-"), f"{ours['ms']:.2f}",
                     f"{ours['tflops']:.0f}", f"{t1:.2f}" if t1 else "-",
                     f"{cd:.2f}" if cd else "-", f"{cd / ours['ms']:.2f}" if cd else "-",
                     f"{t1 / ours['ms']:.2f}" if t1 else "-"]
            print("| " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    main()
