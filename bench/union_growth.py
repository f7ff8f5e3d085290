"""How much work a token tile does per valid (query, key) pair, from the
benchmark's own index patterns (python/sparse_mla/bench.py), on the CPU.

A tile of T adjacent tokens computes every entry of its union once for all
T x H columns, so its work is the union's 64-key blocks, not the pairs. Under
the random pattern adjacent tokens at position p share about topk / p of
their keys, so the union per pair grows with S, and so does the time per pair
of any tile kernel, with no change in the kernel.

    python3 bench/union_growth.py --shapes 16384,32768 --tile 4
"""
import argparse

import torch

from sparse_mla.bench import correlated_indices
from sparse_mla.reference import causal_indices


def work_per_pair(idx, tile):
    """(union entries, 64-key blocks) per valid slot over the tiles of
    `tile` adjacent rows of idx [S, topk]."""
    s, topk = idx.shape
    rows = idx[: s - s % tile].reshape(-1, tile * topk).sort(dim=1).values.long()
    valid = rows >= 0
    fresh = torch.ones_like(valid)
    fresh[:, 1:] = rows[:, 1:] != rows[:, :-1]
    entries = (valid & fresh).sum(dim=1)
    blocks = (entries + 63) // 64
    pairs = valid.sum()
    return float(entries.sum() / pairs), float(blocks.sum() * 64 / pairs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="4096,8192,16384,32768",
                    help="S = Skv values, comma-separated")
    ap.add_argument("--tile", type=int, default=4, help="tokens per tile (T)")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    gen = torch.Generator().manual_seed(a.seed)
    print(f"T = {a.tile}, topk = {a.topk}: union entries and 64-key blocks x 64 per valid pair")
    for pattern in ("random", "correlated"):
        for s in (int(x) for x in a.shapes.split(",")):
            if pattern == "random":
                idx = causal_indices(1, s, 1, a.topk, device="cpu", generator=gen)[0, :, 0]
            else:
                idx = correlated_indices(s, a.topk, gen, device="cpu")
            entries, blocks = work_per_pair(idx, a.tile)
            print(f"{pattern:10s} S={s:6d}  entries/pair {entries:.3f}  blocks/pair {blocks:.3f}")


if __name__ == "__main__":
    main()
