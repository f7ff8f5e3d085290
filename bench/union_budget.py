#!/usr/bin/env python3
"""What a smaller union budget costs: the backward with workspaces sized for
several `union_bytes` (the token tiles' union buffers, and per token the
key ranges' sorted keys), timed in one process, interleaved call by call
(bench/interleave.py). A budget smaller than a call's unions runs its tiles
in launches of equal size, each ending in a tail of idle SMs.

  python3 bench/union_budget.py [--budgets 256,64,32] [--shapes 16384x16,16384x64]
"""
import torch

import sparse_mla
from sparse_mla.bench import make_inputs

from interleave import interleave, parser, report


def main():
    ap = parser(__doc__, "16384x16,16384x64,8192x16,4096x16", 20)
    ap.add_argument("--budgets", default="256,128,64,32", help="MiB, the first is the base")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    names = [f"{b} MiB" for b in budgets]
    print(f"{torch.cuda.get_device_name()}, {a.rounds} rounds, topk {a.topk}, {a.pattern}")
    print("| S | H | " + " | ".join(f"{n}: MB" for n in names) + " | "
          + " | ".join(f"{n}: ms" for n in names) + " | "
          + " | ".join(f"{n} / {names[0]}" for n in names[1:]) + " |")
    for shape in a.shapes.split(","):
        s, h = map(int, shape.split("x"))
        args = make_inputs(s, h, a.topk, a.pattern)
        calls, sizes = {}, []
        for name, mib in zip(names, budgets):
            size = sparse_mla.workspace_bytes(*args, union_bytes=mib << 20)
            ws = torch.empty(size, dtype=torch.uint8, device="cuda")
            sizes.append(f"{size / 1e6:.1f}")
            calls[name] = (lambda ws=ws: sparse_mla.sparse_mla_bwd(
                *args, lse_base2=False, workspace=ws))
        times = interleave(calls, a.rounds)
        print(f"| {s} | {h} | {' | '.join(sizes)} | {report(times, names[0])} |", flush=True)


if __name__ == "__main__":
    main()
