"""Long-context timing of the key-range work order (issue 26), side by side
in one process: Sq queries at the tail of Skv keys (the query at position p
picks topk distinct keys uniformly from [0, p], in random order: what a
context-parallel rank sees), and S = Skv (the random causal pattern).

    python3 bench/long_context.py [--shapes 4096:16384x16,...] [--ranges off,auto,8192]
                                  [--windows 1,2] [--reps 10] [--out DIR]

Each row: the shape (Sq:Skv x H), the variant (`off`, `auto` or keys per
range, with the window), the median ms over --reps (L2 flushed before
each), and ms per million valid (query, key) pairs; cuDNN-frontend's SM90
backward where importable. o and lse are random but finite: the kernels'
time does not depend on their values. Ratios mean something only within
one run."""
import argparse
import json
import statistics
from pathlib import Path

import torch

import sparse_mla
import sparse_mla.bwd as bwd

D, D_TAIL = 512, 64


def tail_indices(sq, skv, topk, gen):
    """[Sq, 1, topk] int32: query s at position p = Skv - Sq + s picks
    min(p + 1, topk) distinct keys of [0, p] uniformly, the rest -1."""
    rows = []
    offset = skv - sq
    for start in range(0, sq, 256):
        n = min(256, sq - start)
        pos = offset + start + torch.arange(n, device="cuda")
        score = torch.rand(n, skv, device="cuda", generator=gen)
        score[torch.arange(skv, device="cuda")[None, :] > pos[:, None]] = -1.0
        top = score.topk(topk, dim=1)
        rows.append(torch.where(top.values >= 0, top.indices, -1).int())
    return torch.cat(rows)[:, None, :].contiguous()


def make(sq, skv, h, topk, seed=1):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(sq, h, D + D_TAIL, device="cuda", generator=gen).bfloat16()
    kv = torch.randn(skv, 1, D + D_TAIL, device="cuda", generator=gen).bfloat16()
    o = torch.randn(sq, h, D, device="cuda", generator=gen).bfloat16()
    do = torch.randn(sq, h, D, device="cuda", generator=gen).bfloat16()
    lse = torch.full((sq, h), 12.0, device="cuda")
    idx = tail_indices(sq, skv, topk, gen)
    pairs = int((idx >= 0).sum())
    return (q, kv, o, do, idx, lse), pairs


def time_it(fn, reps):
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def cudnn_backward():
    try:
        from cudnn.deepseek_sparse_attention import sparse_attention_backward_wrapper
    except ImportError:
        return None

    def run(q, kv, o, do, idx, lse):
        sink = torch.full((q.shape[1],), float("-inf"), device="cuda")
        sparse_attention_backward_wrapper(q, kv[:, 0].contiguous(), o, do, lse, sink, idx[:, 0],
                                          softmax_scale=q.shape[-1] ** -0.5)
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096:16384x16,4096:65536x16,4096:131072x16,"
                    "4096:16384x64,4096:65536x64,4096:131072x64,"
                    "16384:16384x16,32768:32768x16,16384:16384x64,32768:32768x64")
    ap.add_argument("--ranges", default="off,auto")
    ap.add_argument("--windows", default="1")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    cudnn = cudnn_backward()
    rows = []
    for shape in args.shapes.split(","):
        lens, h = shape.split("x")
        sq, skv = map(int, lens.split(":"))
        inputs, pairs = make(sq, skv, int(h), args.topk)
        variants = []
        for r in args.ranges.split(","):
            setting = {"off": False, "auto": None, "on": True}.get(r, None if r == "auto" else
                                                                   (int(r) if r.isdigit() else r))
            for w in map(int, args.windows.split(",")):
                if setting is False and w != int(args.windows.split(",")[0]):
                    continue
                variants.append((f"{r}/w{w}" if setting is not False else "off", setting, w))
        for name, setting, w in variants:
            bwd.KEY_RANGE_WINDOW = w
            stats = {}

            def ours():
                sparse_mla.sparse_mla_bwd(*inputs, lse_base2=False, is_causal=True,
                                          q_offset=skv - sq, key_ranges=setting, stats=stats)
            ms = time_it(ours, args.reps)
            rows.append(dict(Sq=sq, Skv=skv, H=int(h), peer="sparse_mla", variant=name,
                             range_keys=stats.get("range_keys"), ms=ms,
                             ms_per_mpair=ms / pairs * 1e6))
            print(json.dumps(rows[-1]), flush=True)
        if cudnn is not None:
            ms = time_it(lambda: cudnn(*inputs), args.reps)
            rows.append(dict(Sq=sq, Skv=skv, H=int(h), peer="cudnn_fe_sm90", variant="",
                             ms=ms, ms_per_mpair=ms / pairs * 1e6))
            print(json.dumps(rows[-1]), flush=True)
        del inputs
        torch.cuda.empty_cache()
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "long_context.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
