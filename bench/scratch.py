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

With --measure (a GPU, cuDNN-frontend importable as for the benchmark) it
measures instead, on the benchmark's inputs (random pattern): peak memory
minus the outputs (dq, dkv) of one call of ours at each union budget (the
default, plan.UNION_BYTES, through no workspace; another through a workspace
of that plan's size, allocated inside the measured span) and of cuDNN's
wrapper, with each call's median time (CUDA events, L2 flushed).
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


def measured(shapes, budgets, reps):
    from sparse_mla import bench
    backward = bench.peers(False, pass_="bwd")
    cudnn = backward.get("cudnn_fe_sm90")
    mb = 1e6
    print(f"Scratch measured (MB: peak minus dq and dkv), topk {TOPK}, random pattern, "
          f"{torch.cuda.get_device_name()}; ms: median of {reps}.\n")
    print("| S | H | cuDNN MB | cuDNN ms | " + " | ".join(
        f"ours {b} MiB: MB | - cuDNN | ms" for b in budgets) + " |")
    print("|---|---|---|---|" + "---|---|---|" * len(budgets))
    for shape in shapes:
        s, h = map(int, shape.split("x"))
        args = bench.make_inputs(s, h, TOPK, "random")
        q, kv = args[0], args[1]
        outputs = q.numel() * q.element_size() + kv.numel() * kv.element_size()

        def scratch(fn):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            result = fn()
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - before
            del result
            return peak - outputs

        cells = [str(s), str(h)]
        theirs = None
        if cudnn:
            theirs = scratch(lambda: cudnn(*args))
            cells += [f"{theirs / mb:.0f}", f"{bench.time_it(cudnn, args, reps)[0]:.2f}"]
        else:
            cells += ["-", "-"]
        for b in budgets:
            def call(b=b):
                kw = {}
                if b << 20 != sparse_mla.plan.UNION_BYTES:   # the default: no workspace
                    kw["workspace"] = torch.empty(sparse_mla.workspace_bytes(
                        *args, union_bytes=b << 20), dtype=torch.uint8, device="cuda")
                return sparse_mla.sparse_mla_bwd(*args, lse_base2=False, **kw)
            ours = scratch(call)
            ms = bench.time_it(lambda *_: call(), args, reps)[0]
            cells += [f"{ours / mb:.0f}",
                      f"{(ours - theirs) / mb:+.0f}" if theirs is not None else "-",
                      f"{ms:.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
        del args
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budgets", default="256,64,32", help="union budgets, MiB")
    ap.add_argument("--shapes", default=",".join(f"{s}x{h}" for s in (2048, 4096, 8192, 16384)
                                                 for h in (8, 16, 32, 64, 128)))
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--measure", action="store_true", help="measure on the GPU (see above)")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    if a.measure:
        if a.deterministic:
            ap.error("--measure measures the default mode, as cuDNN's call runs")
        return measured(a.shapes.split(","), budgets, a.reps)
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
