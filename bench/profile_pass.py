"""One backward (or with --pass fwd one forward) at (S, H) of the
benchmark's shapes, for a profiler:
    ncu --kernel-name regex:sparse_mla_bwd_d --launch-skip 1 --launch-count 1 \\
        python3 bench/profile_pass.py --seq 4096 --heads 16
(the forward's kernel: regex:sparse_mla_fwd_d). The first call warms up
(module load); the second is the one to profile.
--kv-len puts the S queries at the tail of that many keys; --key-ranges
off|on forces the key-range order (default: the package's choice)."""
import argparse

import torch

import sparse_mla
from sparse_mla.reference import causal_indices

ap = argparse.ArgumentParser()
ap.add_argument("--seq", type=int, default=4096)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--topk", type=int, default=2048)
ap.add_argument("--d-tail", type=int, default=64, choices=(0, 64), help="rope columns of q and kv")
ap.add_argument("--kv-len", type=int, default=None)
ap.add_argument("--key-ranges", choices=("off", "on"), default=None)
ap.add_argument("--pass", dest="pass_", choices=("bwd", "fwd"), default="bwd")
a = ap.parse_args()
gen = torch.Generator(device="cuda").manual_seed(0)
s, h = a.seq, a.heads
dqk = 512 + a.d_tail
q = torch.randn(1, s, h, dqk, device="cuda", generator=gen).bfloat16()
skv = a.kv_len or s
kv = torch.randn(1, skv, 1, dqk, device="cuda", generator=gen).bfloat16()
o = torch.randn(1, s, h, 512, device="cuda", generator=gen).bfloat16()
do = torch.randn(1, s, h, 512, device="cuda", generator=gen).bfloat16()
lse = torch.randn(1, s, h, device="cuda", generator=gen).abs() + 10
idx = causal_indices(1, s, 1, a.topk, skv, generator=gen, q_offset=skv - s)
ranges = {"off": False, "on": True, None: None}[a.key_ranges]
for _ in range(2):
    if a.pass_ == "fwd":
        sparse_mla.sparse_mla_fwd(q, kv, idx, q_offset=skv - s)
    else:
        sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, q_offset=skv - s, key_ranges=ranges)
torch.cuda.synchronize()
print(f"profile_pass {a.pass_}: done")
