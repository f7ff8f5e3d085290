"""Stall samples of a kernel by phase, from the per-SASS-instruction CSV that
`SOURCE=1 tools/gpu.sh profile` writes (ncu --page source --print-source sass).

A phase starts at each landmark: a wgmma wait, a CTA barrier, the first
instruction of a run of HGMMAs, reductions, or async copies. For each phase it
prints the share of all samples and its three largest stall reasons, so a
profile reads as the loop's timeline.
usage: python3 bench/stall_phases.py ncu-h64-source.csv [--top 3] [--min 0.5]"""
import argparse
import csv
import re

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("--top", type=int, default=3)
ap.add_argument("--min", type=float, default=0.5, help="hide phases below this percent")
a = ap.parse_args()
rows = list(csv.reader(open(a.csv)))
header = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
hdr, data = rows[header], rows[header + 1:]
col = {h: i for i, h in enumerate(hdr)}
samples = col["Warp Stall Sampling (All Samples)"]
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
total = sum(int(r[samples] or 0) for r in data) or 1

KINDS = [("wgmma", r"HGMMA"), ("wgmma wait", r"WARPGROUP\.DEPBAR"), ("barrier", r"BAR\.(SYNC|RED)"),
         ("reductions", r"REDG|UBLKRED"), ("async copies", r"LDGSTS"), ("exit", r"EXIT")]


def kind(src):
    return next((k for k, p in KINDS if re.search(p, src)), None)


phases, current = [], None
for i, r in enumerate(data):
    k = kind(r[1])
    if k and (current is None or k != current["kind"] or k in ("wgmma wait", "barrier")):
        current = {"kind": k, "start": i, "rows": []}
        phases.append(current)
    if current is None:
        current = {"kind": "prologue", "start": i, "rows": []}
        phases.append(current)
    current["rows"].append(r)

for p in phases:
    s = sum(int(r[samples] or 0) for r in p["rows"])
    if 100 * s / total < a.min:
        continue
    by = {h[6:]: sum(int(r[col[h]] or 0) for r in p["rows"]) for h in reasons}
    top = sorted(by.items(), key=lambda kv: -kv[1])[:a.top]
    execs = max((int(r[col["Instructions Executed"]] or 0) for r in p["rows"]), default=0)
    print(f"{p['start']:5d} {p['kind']:13s} {len(p['rows']):4d} instr {100 * s / total:6.2f}%  "
          f"(executed {execs:>9d})  " + ", ".join(f"{k} {100 * v / total:.1f}" for k, v in top))
