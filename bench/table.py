#!/usr/bin/env python3
"""Writes the markdown table of a bench_bwd.py sweep next to the peers.

usage: table.py SWEEP.json PEERS.json [PREVIOUS_SWEEP.json] > SWEEP.md

PEERS.json is ../shared/notes/peers-h200.json (the peers measured on the same
H200 with the same protocol); PREVIOUS_SWEEP.json, when given, adds a column
with the earlier run's times.
"""
import json
import sys


def main():
    sweep = json.load(open(sys.argv[1]))
    peers = {(r["S"], r["H"]): r for r in json.load(open(sys.argv[2]))["rows"]}
    prev = None
    if len(sys.argv) > 3:
        p = json.load(open(sys.argv[3]))
        prev = (p["commit"], {(r["S"], r["H"]): r["ms"] for r in p["rows"]})
    print(f"# Sparse-MLA backward, H200, {sweep['date']}, commit {sweep['commit']}\n")
    print("On the device, with the bundle of `tools/build_kernels.sh` carried: "
          f"`COMMIT={sweep['commit']} bash tools/gpu_check_bwd.sh`, which runs")
    print(f"`{sweep['command']}` (protocol DESIGN.md section 6). "
          "Peers from ../shared/notes/peers-h200.json.")
    if prev:
        print(f"'previous' is the sweep at commit {prev[0]}.")
    cols = ["S", "H", "ours ms", "TFLOP/s"] + (["previous ms"] if prev else []) + [
        "TileLang ms", "x TileLang", "cuDNN ms", "x cuDNN", "x reference"]
    print("\n| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in sweep["rows"]:
        peer = peers.get((r["S"], r["H"]), {})
        tl = peer.get("tilelang_example", {}).get("ms")
        cd = peer.get("cudnn_fe_sm90", {}).get("ms")
        cells = [r["S"], r["H"], f"{r['ms']:.2f}", f"{r['tflops']:.1f}"]
        if prev:
            ms = prev[1].get((r["S"], r["H"]))
            cells.append(f"{ms:.2f}" if ms else "-")
        cells += [f"{tl:.2f}" if tl else "-", f"{tl / r['ms']:.2f}" if tl else "-",
                  f"{cd:.2f}" if cd else "-", f"{cd / r['ms']:.2f}" if cd else "-",
                  f"{r['speedup_vs_reference']:.1f}"]
        print("| " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    main()
