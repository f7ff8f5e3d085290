"""The benchmark of DESIGN.md section 6, side by side:

    python3 -m sparse_mla.bench [--shapes 4096x16,4096x64] [--patterns random,correlated]
                                [--out DIR] [--reference]

B=1, G=1, D=512, D_tail=64 (--d-tail), S=Skv, topk=2048, o and lse from a real (fp32)
forward, in one process on the same inputs:
  sparse_mla      this package, with token tiles where they apply
  sparse_mla_t1   token_tile=1, the per-token kernel (only where tiles apply)
  sparse_mla_det  deterministic=True: dKV in 64-bit fixed point (with --deterministic)
  cudnn_fe_sm90   NVIDIA cuDNN-frontend's SM90 DSA backward, when importable
  reference       the float32 PyTorch reference (with --reference)
CUDA events, a second of GEMMs before the first shape (the first shapes'
medians ran up to 30% above their minimum without it, the peers' too), 3
warm-up calls, the median of --reps with the L2 flushed before each. Index patterns: `random` (token t picks min(t + 1, topk) distinct keys
of [0, t] in random order, the rest -1: every published figure uses it) and
`correlated` (from token topk on, each token keeps 75% of the previous
token's keys and draws the rest, as trained DSA indexers share 72-75%).

Writes DIR/bench.json (rows {"kind": "time", "peer", "S", "H", "topk",
"pattern", "ms", "ms_min", "tflops", "tile_tokens"}), DIR/bench.md and, with
matplotlib, DIR/bench.png: TFLOP/s against S, a panel per H, a line per
kernel, solid for the random pattern and dashed for the correlated one.
`--render RUN.json ...` writes the table and plot of earlier runs. Ratios
between kernels mean something only within one run.
"""
import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import torch

D, D_TAIL = 512, 64


def flops(s, h, topk, d_tail=D_TAIL):
    return 2 * s * h * topk * (3 * (D + d_tail) + 2 * D)


def correlated_indices(s, topk, generator, device="cuda"):
    """[S, topk] int32: as the random pattern for t < topk; then token t keeps
    a random 75% of token t-1's keys and draws the rest from the other keys
    of [0, t], in random order (../shared/peers/bench_peers.py's pattern)."""
    seed = int(torch.randint(0, 2**31, (1,), generator=generator, device=generator.device))
    g = torch.Generator().manual_seed(seed)
    idx = torch.full((s, topk), -1, dtype=torch.int32)
    prev = None
    for t in range(s):
        n = min(t + 1, topk)
        if n == t + 1:
            cur = torch.randperm(t + 1, generator=g)
        else:
            kept = prev[torch.randperm(topk, generator=g)[: round(0.75 * topk)]]
            free = torch.ones(t + 1, dtype=torch.bool)
            free[kept] = False
            pool = free.nonzero().flatten()
            fresh = pool[torch.randperm(pool.numel(), generator=g)[: n - kept.numel()]]
            cur = torch.cat([kept, fresh])[torch.randperm(n, generator=g)]
        idx[t, :n] = cur.int()
        prev = cur
    return idx.to(device)


def make_inputs(s, h, topk, pattern, seed=1, d_tail=D_TAIL):
    from .reference import causal_indices, sparse_mla_fwd_reference
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(s, h, D + d_tail, device="cuda", generator=gen).bfloat16()
    kv = torch.randn(s, 1, D + d_tail, device="cuda", generator=gen).bfloat16()
    do = torch.randn(s, h, D, device="cuda", generator=gen).bfloat16()
    if pattern == "random":
        idx = causal_indices(1, s, 1, topk, generator=gen)[0]
    else:
        idx = correlated_indices(s, topk, gen)[:, None, :].contiguous()
    o, lse = sparse_mla_fwd_reference(q, kv, idx, dtype=torch.float32, lse_base2=False)
    return q, kv, o, do, idx, lse


def peers(with_reference, deterministic=False):
    import sparse_mla
    from .reference import sparse_mla_bwd_reference
    found = {
        "sparse_mla": lambda q, kv, o, do, idx, lse: sparse_mla.sparse_mla_bwd(
            q, kv, o, do, idx, lse, lse_base2=False),
        "sparse_mla_t1": lambda q, kv, o, do, idx, lse: sparse_mla.sparse_mla_bwd(
            q, kv, o, do, idx, lse, lse_base2=False, token_tile=1),
    }
    if deterministic:
        found["sparse_mla_det"] = lambda q, kv, o, do, idx, lse: sparse_mla.sparse_mla_bwd(
            q, kv, o, do, idx, lse, lse_base2=False, deterministic=True)
    try:
        from cudnn.deepseek_sparse_attention import sparse_attention_backward_wrapper

        def cudnn(q, kv, o, do, idx, lse):
            sink = torch.full((q.shape[1],), float("-inf"), device="cuda")
            r = sparse_attention_backward_wrapper(q, kv[:, 0].contiguous(), o, do,
                                                  lse.contiguous(), sink, idx[:, 0],
                                                  softmax_scale=q.shape[-1] ** -0.5)
            return r["dq"], r["dkv"].view(kv.shape)
        found["cudnn_fe_sm90"] = cudnn
    except ImportError:
        pass
    if with_reference:
        found["reference"] = lambda q, kv, o, do, idx, lse: sparse_mla_bwd_reference(
            q, kv, o, do, idx, lse, lse_base2=False, dtype=torch.float32)
    return found


def time_it(fn, args, reps):
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")  # > the 60 MB L2
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times)


def warm_up(seconds=1.0):
    """Keeps the GPU busy so that its clocks are up before the first timing."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()


def measure(shapes, patterns, topk, reps, with_reference, d_tail=D_TAIL, deterministic=False):
    import sparse_mla
    rows = []
    kernels = peers(with_reference, deterministic)
    print("device", torch.cuda.get_device_name(), "kernels", list(kernels), flush=True)
    warm_up()
    for pattern in patterns:
        for s, h in shapes:
            args = make_inputs(s, h, topk, pattern, d_tail=d_tail)
            tiles = sparse_mla.bwd.tile_tokens(h, s, s, topk)
            for name, fn in kernels.items():
                if name == "sparse_mla_t1" and tiles == 1:
                    continue  # the same call as sparse_mla
                row = dict(kind="time", peer=name, S=s, H=h, topk=topk, pattern=pattern,
                           d_tail=d_tail)
                t0 = time.time()
                try:
                    med, low = time_it(fn, args, 3 if name == "reference" else reps)
                    row.update(ms=med, ms_min=low, tflops=flops(s, h, topk, d_tail) / med / 1e9,
                               wall_s=round(time.time() - t0, 1))
                    if name.startswith("sparse_mla"):
                        row["tile_tokens"] = 1 if name == "sparse_mla_t1" else tiles
                    if name == "sparse_mla_det":
                        row["deterministic"] = True
                except Exception as e:  # a failing kernel is a row, not the end of the run
                    row["error"] = repr(e)[:300]
                print(json.dumps(row), flush=True)
                rows.append(row)
                torch.cuda.empty_cache()
            del args
    return rows


def source(run):
    """What was measured: the package version, or the commit of earlier runs."""
    return run.get("version") or f"commit {run.get('commit', 'unknown')}"


def table(run):
    """The markdown of a run: per pattern, ours against the others."""
    topk = run.get("topk") or run["rows"][0]["topk"]
    d_tail = run.get("d_tail", D_TAIL)
    out = [f"# Sparse-MLA backward, {run['device']}, {run['date']}, {source(run)}\n",
           f"`{run['command']}` (DESIGN.md section 6, topk {topk}, D_tail {d_tail}; medians in ms; "
           "`T` is the token tile sparse_mla chose; `per token` is token_tile=1, timed "
           "where T > 1; ratios are within this run).\n"]
    timed = [r for r in run["rows"] if "ms" in r]
    for pattern in dict.fromkeys(r["pattern"] for r in timed):
        rows = {}
        for r in timed:
            if r["pattern"] == pattern:
                rows.setdefault((r["S"], r["H"]), {})[r["peer"]] = r
        out += [f"## Pattern `{pattern}`\n",
                "| S | H | T | ours ms | TFLOP/s | per token ms | cuDNN ms | x cuDNN | x per token "
                "| deterministic ms | its cost | det. x cuDNN |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for (s, h), by in sorted(rows.items()):
            ours = by.get("sparse_mla")
            if not ours:
                continue
            t1 = by.get("sparse_mla_t1", {}).get("ms")
            cd = by.get("cudnn_fe_sm90", {}).get("ms")
            det = by.get("sparse_mla_det", {}).get("ms")
            out.append("| " + " | ".join(map(str, [
                s, h, ours.get("tile_tokens", "-"), f"{ours['ms']:.2f}", f"{ours['tflops']:.0f}",
                f"{t1:.2f}" if t1 else "-", f"{cd:.2f}" if cd else "-",
                f"{cd / ours['ms']:.2f}" if cd else "-",
                f"{t1 / ours['ms']:.2f}" if t1 else "-",
                f"{det:.2f}" if det else "-", f"{det / ours['ms'] - 1:+.0%}" if det else "-",
                f"{cd / det:.2f}" if det and cd else "-"])) + " |")
        out.append("")
    return "\n".join(out)


def plot(run, path):
    """TFLOP/s against S, a panel per H; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = [r for r in run["rows"] if "ms" in r and r["peer"] != "reference"]
    heads = sorted({r["H"] for r in timed})
    fig, axes = plt.subplots(1, len(heads), figsize=(3.6 * len(heads), 3.6), squeeze=False)
    colors = {"sparse_mla": "C0", "sparse_mla_t1": "C2", "cudnn_fe_sm90": "C3",
              "sparse_mla_det": "C1"}
    labels = {"sparse_mla": "sparse_mla", "sparse_mla_t1": "sparse_mla per token",
              "cudnn_fe_sm90": "cuDNN-frontend SM90",
              "sparse_mla_det": "sparse_mla deterministic"}
    for ax, h in zip(axes[0], heads):
        for (peer, pattern) in sorted({(r["peer"], r["pattern"]) for r in timed if r["H"] == h}):
            pts = sorted((r["S"], r["tflops"]) for r in timed
                         if r["H"] == h and r["peer"] == peer and r["pattern"] == pattern)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    color=colors.get(peer, "C7"), linestyle="-" if pattern == "random" else "--",
                    label=f"{labels.get(peer, peer)}, {pattern}")
        ax.set_xscale("log", base=2)
        ax.set_title(f"H = {h}")
        ax.set_xlabel("S = Skv (topk 2048)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("TFLOP/s")
    legend = {}
    for ax in axes[0]:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(name, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=3, fontsize=8,
               frameon=False)
    fig.suptitle(f"Sparse-MLA backward, {run['device']}, {run['date']}, {source(run)}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=110)
    return True


def write(run, out):
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(run, indent=1) + "\n")
    (out / "bench.md").write_text(table(run))
    drew = plot(run, out / "bench.png")
    print(f"wrote {out}/bench.json, bench.md" + (", bench.png" if drew else
                                                 " (no matplotlib: no plot)"))


def main(argv=None):
    import sparse_mla
    ap = argparse.ArgumentParser(prog="python3 -m sparse_mla.bench",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(f"{s}x{h}" for s in (2048, 4096, 8192, 16384)
                                                 for h in (8, 16, 32, 64, 128)),
                    help="SxH,... (default: the sweep of DESIGN.md section 6 and H=8)")
    ap.add_argument("--patterns", default="random,correlated")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--d-tail", type=int, default=D_TAIL, choices=(0, D_TAIL),
                    help="columns of q and kv past D (the rope part): 64, or 0")
    ap.add_argument("--reference", action="store_true", help="also time the PyTorch reference")
    ap.add_argument("--deterministic", action="store_true",
                    help="also time deterministic=True (sparse_mla_det)")
    ap.add_argument("--out", default=".", help="folder for bench.json, bench.md, bench.png")
    ap.add_argument("--render", nargs="+", metavar="RUN.json",
                    help="no timing: the table and plot of earlier runs (merged)")
    a = ap.parse_args(argv)
    if a.render:
        runs = [json.loads(Path(p).read_text()) for p in a.render]
        run = dict(runs[0], rows=[r for x in runs for r in x["rows"]],
                   command=" and ".join(dict.fromkeys(x["command"] for x in runs)))
        write(run, Path(a.out))
        return 0
    if not torch.cuda.is_available():
        print("sparse_mla.bench needs a CUDA GPU", file=sys.stderr)
        return 1
    try:
        shapes = [tuple(map(int, x.split("x"))) for x in a.shapes.split(",")]
    except ValueError:
        ap.error(f"--shapes must be SxH,..., got {a.shapes!r}")
    patterns = a.patterns.split(",")
    if not set(patterns) <= {"random", "correlated"}:
        ap.error(f"--patterns must be random and/or correlated, got {a.patterns!r}")
    rows = measure(shapes, patterns, a.topk, a.reps, a.reference, a.d_tail, a.deterministic)
    run = dict(date=datetime.date.today().isoformat(), version=sparse_mla.__version__,
               device=torch.cuda.get_device_name(), topk=a.topk, d_tail=a.d_tail,
               command="python3 -m sparse_mla.bench " + " ".join(argv or sys.argv[1:]),
               protocol="DESIGN.md section 6", rows=rows)
    write(run, Path(a.out))
    failed = [r for r in rows if "error" in r and r["peer"].startswith("sparse_mla")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
