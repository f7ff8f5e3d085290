"""Bitwise repeatability of the backward, on a GPU: for each H, with the
benchmark's causal random keys and with keys repeated within and across
rows, 20 calls on the same inputs (an attention sink of 0 on every head).
By default dq and d_sink must be bitwise equal; with deterministic=True dq,
dkv and d_sink. The default dkv (fp32 atomics) is reported, not required.

    python3 bench/repeats.py [--s 4096] [--topk 2048] [--heads 8,16,32,64,128] [--out FILE.md]
"""
import argparse
import datetime
import sys

import torch

import sparse_mla
from sparse_mla.bench import make_inputs


def repeated(idx):
    """idx with a third of each row's slots repeating another slot of it, and
    every odd token repeating the row of the token before it."""
    idx = idx.clone()
    third = idx[:, :, ::3]
    idx[:, :, ::3] = idx[:, :, 1::3][..., :third.shape[-1]]
    idx[1::2] = idx[0::2][:idx[1::2].shape[0]]
    return idx


def run(s, h, topk, keys, reps=20):
    """(T, dict of output name -> number of runs unlike the first), per mode."""
    q, kv, o, do, idx, lse = make_inputs(s, h, topk, "random")
    if keys == "repeated":
        idx = repeated(idx)
    sink = torch.zeros(h, device="cuda")
    out = {}
    for det in (False, True):
        first = sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, lse_base2=False,
                                          attn_sink=sink, deterministic=det)
        unlike = {"dq": 0, "dkv": 0, "d_sink": 0}
        for _ in range(reps - 1):
            again = sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, lse_base2=False,
                                              attn_sink=sink, deterministic=det)
            for name, a, b in zip(unlike, again, first):
                unlike[name] += not torch.equal(a, b)
        out["deterministic" if det else "default"] = unlike
    return sparse_mla.plan.tile_tokens(h, s, s, topk), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--s", type=int, default=4096)
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--heads", default="8,16,32,64,128")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    lines = [f"# Bitwise repeats, {torch.cuda.get_device_name()}, {datetime.date.today()}, "
             f"sparse_mla {sparse_mla.__version__}\n",
             f"`python3 bench/repeats.py {' '.join(argv or sys.argv[1:])}`: S = Skv = {a.s}, "
             f"topk {a.topk}, 20 calls on the same inputs; the count of calls 2..20 whose "
             "output differs bitwise from call 1 (0 is repeatable).\n",
             "| H | T | keys | default dq | default d_sink | default dkv (not required) "
             "| det. dq | det. dkv | det. d_sink |",
             "|---|---|---|---|---|---|---|---|---|"]
    failed = False
    for h in map(int, a.heads.split(",")):
        for keys in ("distinct", "repeated"):
            t, r = run(a.s, h, a.topk, keys)
            d, x = r["default"], r["deterministic"]
            failed |= bool(d["dq"] or d["d_sink"] or x["dq"] or x["dkv"] or x["d_sink"])
            lines.append(f"| {h} | {t} | {keys} | {d['dq']} | {d['d_sink']} | {d['dkv']} "
                         f"| {x['dq']} | {x['dkv']} | {x['d_sink']} |")
            print(lines[-1], flush=True)
            torch.cuda.empty_cache()
    lines.append("\n" + ("FAILED: an output that must repeat did not" if failed
                         else "Every output that must repeat did, in every call."))
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
