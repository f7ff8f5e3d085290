#!/usr/bin/env python3
"""The backward's scratch memory by formula, no GPU: this package's
workspace_bytes (from the kernels' manifests, tensors on the "meta" device)
at several union budgets, next to cuDNN-frontend 1.32's SM90 workspace
(flash_attn_bwd_sm90_workspace_size: two fp32 [S_q/64*64, H] tables and the
fp32 dKV accumulator [S_kv/64*64, D/32*32], each rounded to 128 bytes), over
the benchmark's sweep. What a GPU measures (peak minus outputs) adds the
allocator's rounding and the kernels' own temporaries; this is the part the
workspace decides.

    PYTHONPATH=bundle python3 bench/scratch.py [--budgets 256,64,32] [--deterministic]
"""
import argparse

import torch

import sparse_mla

D, D_TAIL, TOPK = 512, 64, 2048


def cudnn_sm90_bytes(s_q, s_kv, heads, dim=D + D_TAIL):
    """cuDNN-frontend 1.32's SM90 backward workspace, as its formula states."""
    def align(n):
        return -(-n // 128) * 128

    def up(n, m):
        return -(-n // m) * m
    return 2 * align(up(s_q, 64) * heads * 4) + align(up(s_kv, 64) * up(dim, 32) * 4)


def ours_bytes(s, skv, h, union_mib, deterministic):
    meta = dict(device="meta")
    q = torch.empty(s, h, D + D_TAIL, dtype=torch.bfloat16, **meta)
    kv = torch.empty(skv, 1, D + D_TAIL, dtype=torch.bfloat16, **meta)
    o = torch.empty(s, h, D, dtype=torch.bfloat16, **meta)
    idx = torch.empty(s, 1, TOPK, dtype=torch.int32, **meta)
    lse = torch.empty(s, h, **meta)
    return sparse_mla.workspace_bytes(q, kv, o, o, idx, lse, deterministic=deterministic,
                                      union_bytes=union_mib << 20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budgets", default="256,64,32", help="union budgets, MiB")
    ap.add_argument("--shapes", default=",".join(f"{s}x{h}" for s in (2048, 4096, 8192, 16384)
                                                 for h in (8, 16, 32, 64, 128)))
    ap.add_argument("--deterministic", action="store_true")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    mb = 1e6
    print(f"Scratch by formula (MB), topk {TOPK}, D_tail {D_TAIL}, S = Skv, "
          f"{'deterministic' if a.deterministic else 'default mode'}; cuDNN-frontend 1.32 SM90.\n")
    print("| S | H | cuDNN | " + " | ".join(f"ours, {b} MiB unions | - cuDNN" for b in budgets)
          + " |")
    print("|---|---|---|" + "---|---|" * len(budgets))
    for shape in a.shapes.split(","):
        s, h = map(int, shape.split("x"))
        theirs = cudnn_sm90_bytes(s, s, h)
        cells = [str(s), str(h), f"{theirs / mb:.0f}"]
        for b in budgets:
            ours = ours_bytes(s, s, h, b, a.deterministic)
            cells += [f"{ours / mb:.0f}", f"{(ours - theirs) / mb:+.0f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
