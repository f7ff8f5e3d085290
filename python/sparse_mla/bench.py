"""The benchmark of DESIGN.md section 6, side by side:

    python3 -m sparse_mla.bench [--shapes 4096x16,4096x64,4096:131072x16] [--pass bwd]
                                [--patterns random,correlated] [--out DIR] [--reference]

B=1, G=1, D=512, D_tail=64 (--d-tail), S=Skv (SxH) or S queries at the tail of Skv keys
(S:SkvxH, positions Skv - S .. Skv - 1: what a context-parallel rank sees at long context),
topk=2048, o and lse from a real (fp32) forward, in one process on the same inputs:
  sparse_mla      this package, with token tiles where they apply
  sparse_mla_t1   token_tile=1, the per-token kernel (only where tiles apply)
  sparse_mla_det  deterministic=True: dKV in 64-bit fixed point (with --deterministic)
  cudnn_fe_sm90   NVIDIA cuDNN-frontend's SM90 DSA backward, when importable
  reference       the float32 PyTorch reference (with --reference)
`--pass fwd` times the forward instead (sparse_mla, sparse_mla_t1, reference,
FlashMLA's SM90 sparse prefill where SPARSE_MLA_FLASHMLA_LIB names the
library bench/peers/build_flashmla.sh builds, TileLang's two example forwards
where SPARSE_MLA_TILELANG_EXAMPLES names their folder, and with_kl_target, our
forward with the indexer's KL target, whose "x" is that target's cost; FLOPs
2 S H topk (Dqk + D)); a forward is timed only once its o agrees with float64
on the last 128 queries (cosine >= 0.9999, the row's "cos"). `--pass step`
times a training step (ours: the forward, then the backward on its o and lse;
flashmla_cudnn: FlashMLA's forward, then cuDNN-frontend's backward, where both
are there).
CUDA events, a second of GEMMs before the first shape (the first shapes'
medians ran up to 30% above their minimum without it, the peers' too), 3
warm-up calls, the median of --reps with the L2 flushed before each. Index
patterns: `random` (the token at position p picks min(p + 1, topk) distinct
keys of [0, p] in random order, the rest -1: every published figure uses it)
and `correlated` (from position topk on, each token keeps 75% of the
previous token's keys and draws the rest, as trained DSA indexers share
72-75%).

Writes DIR/bench.json (rows {"kind": "time", "peer", "S", "Skv", "H", "topk",
"pattern", "ms", "ms_min", "tflops", "tile_tokens", "range_keys"}),
DIR/bench.md and, with matplotlib, DIR/bench.png: TFLOP/s against Skv, a
panel per H, a line per kernel, solid for the random pattern and dashed for
the correlated one, dotted for tail queries (S < Skv).
`--render RUN.json ...` writes the table and plot of earlier runs. Ratios
between kernels mean something only within one run.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

from . import _runtime

D, D_TAIL = 512, 64


# What a run times: the backward (the default), the forward, or a training
# step (forward then backward).
PASSES = ("bwd", "fwd", "step")


def flops(s, h, topk, d_tail=D_TAIL, pass_="bwd"):
    """The FLOPs peers report: the backward's 2 S H topk (3 Dqk + 2 D), the
    forward's 2 S H topk (Dqk + D), or both."""
    fwd = 2 * s * h * topk * ((D + d_tail) + D)
    bwd = 2 * s * h * topk * (3 * (D + d_tail) + 2 * D)
    return {"bwd": bwd, "fwd": fwd, "step": fwd + bwd}[pass_]


def correlated_indices(s, topk, generator, device="cuda", q_offset=0):
    """[S, topk] int32: token t is at position p = q_offset + t; as the random
    pattern for p < topk and for the first token; then each token keeps a
    random 75% of the previous token's keys and draws the rest from the
    other keys of [0, p], in random order (../shared/peers/bench_peers.py's
    pattern)."""
    seed = int(torch.randint(0, 2**31, (1,), generator=generator, device=generator.device))
    g = torch.Generator().manual_seed(seed)
    idx = torch.full((s, topk), -1, dtype=torch.int32)
    prev = None
    for t in range(s):
        p = q_offset + t
        n = min(p + 1, topk)
        if prev is None or n == p + 1:
            cur = torch.randperm(p + 1, generator=g)[:n]
        else:
            kept = prev[torch.randperm(topk, generator=g)[: round(0.75 * topk)]]
            free = torch.ones(p + 1, dtype=torch.bool)
            free[kept] = False
            pool = free.nonzero().flatten()
            fresh = pool[torch.randperm(pool.numel(), generator=g)[: n - kept.numel()]]
            cur = torch.cat([kept, fresh])[torch.randperm(n, generator=g)]
        idx[t, :n] = cur.int()
        prev = cur
    return idx.to(device)


def make_inputs(s, h, topk, pattern, seed=1, d_tail=D_TAIL, skv=None):
    """q, kv, o, do, indices, lse of S queries at positions Skv - S .. Skv - 1."""
    from .reference import causal_indices, sparse_mla_fwd_reference
    skv = s if skv is None else skv
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(s, h, D + d_tail, device="cuda", generator=gen).bfloat16()
    kv = torch.randn(skv, 1, D + d_tail, device="cuda", generator=gen).bfloat16()
    do = torch.randn(s, h, D, device="cuda", generator=gen).bfloat16()
    if pattern == "random":
        idx = causal_indices(1, s, 1, topk, skv, generator=gen, q_offset=skv - s)[0]
    else:
        idx = correlated_indices(s, topk, gen, q_offset=skv - s)[:, None, :].contiguous()
    extra = {"q_offset": skv - s} if skv != s else {}
    o, lse = sparse_mla_fwd_reference(q, kv, idx, dtype=torch.float32, lse_base2=False, **extra)
    return q, kv, o, do, idx, lse


def peers(with_reference, deterministic=False, pass_="bwd"):
    """name -> fn(q, kv, o, do, idx, lse, **ours): ours are the options of
    this package's calls (q_offset, stats). The forward's take q, kv and
    idx; a training step's also do (ours: sparse_mla_fwd, then
    sparse_mla_bwd on its o and lse)."""
    import sparse_mla
    from .reference import sparse_mla_bwd_reference, sparse_mla_fwd_reference
    if pass_ == "fwd":
        found = {
            "sparse_mla": lambda q, kv, o, do, idx, lse, **ours: sparse_mla.sparse_mla_fwd(
                q, kv, idx, lse_base2=False, **ours),
            "sparse_mla_t1": lambda q, kv, o, do, idx, lse, **ours: sparse_mla.sparse_mla_fwd(
                q, kv, idx, lse_base2=False, token_tile=1, **ours),
            # The forward and the indexer's KL target: its "x" is the target's cost.
            "with_kl_target": lambda q, kv, o, do, idx, lse, **ours: sparse_mla.sparse_mla_fwd(
                q, kv, idx, lse_base2=False, return_kl_target=True, **ours),
        }
        library = os.environ.get("SPARSE_MLA_FLASHMLA_LIB")
        if library:
            found["flashmla_sm90"] = flashmla(library)
        examples = os.environ.get("SPARSE_MLA_TILELANG_EXAMPLES")
        if examples:
            found.update(tilelang(examples))
        if with_reference:
            found["reference"] = lambda q, kv, o, do, idx, lse, q_offset=0, **_: (
                sparse_mla_fwd_reference(q, kv, idx, lse_base2=False, dtype=torch.float32,
                                         q_offset=q_offset))
        return found
    if pass_ == "step":
        def step(q, kv, o, do, idx, lse, token_tile=None, stats=None, **ours):
            o, lse = sparse_mla.sparse_mla_fwd(q, kv, idx, lse_base2=False,
                                               token_tile=token_tile, **ours)
            return sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, lse_base2=False,
                                             token_tile=token_tile, stats=stats,
                                             deterministic=deterministic, **ours)
        found = {"sparse_mla": step}
        backward = peers(False, pass_="bwd").get("cudnn_fe_sm90")
        library = os.environ.get("SPARSE_MLA_FLASHMLA_LIB")
        if backward and library:
            forward = flashmla(library)

            def flashmla_cudnn(q, kv, o, do, idx, lse, **_):
                o, lse = forward(q, kv, o, do, idx, lse)
                return backward(q, kv, o.contiguous(), do, idx, lse)
            found["flashmla_cudnn"] = flashmla_cudnn
        return found
    found = {
        "sparse_mla": lambda q, kv, o, do, idx, lse, **ours: sparse_mla.sparse_mla_bwd(
            q, kv, o, do, idx, lse, lse_base2=False, **ours),
        "sparse_mla_t1": lambda q, kv, o, do, idx, lse, **ours: sparse_mla.sparse_mla_bwd(
            q, kv, o, do, idx, lse, lse_base2=False, token_tile=1, **ours),
    }
    if deterministic:
        found["sparse_mla_det"] = lambda q, kv, o, do, idx, lse, **ours: (
            sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, lse_base2=False,
                                      deterministic=True, **ours))
    try:
        from cudnn.deepseek_sparse_attention import sparse_attention_backward_wrapper

        def cudnn(q, kv, o, do, idx, lse, **ours):   # its masking is the indices
            sink = torch.full((q.shape[1],), float("-inf"), device="cuda")
            r = sparse_attention_backward_wrapper(q, kv[:, 0].contiguous(), o, do,
                                                  lse.contiguous(), sink, idx[:, 0],
                                                  softmax_scale=q.shape[-1] ** -0.5)
            return r["dq"], r["dkv"].view(kv.shape)
        found["cudnn_fe_sm90"] = cudnn
    except ImportError:
        pass
    if with_reference:
        found["reference"] = lambda q, kv, o, do, idx, lse, q_offset=0, **_: (
            sparse_mla_bwd_reference(q, kv, o, do, idx, lse, lse_base2=False,
                                     dtype=torch.float32, q_offset=q_offset))
    return found


def flashmla(library):
    """FlashMLA's SM90 sparse prefill (bench/peers/build_flashmla.sh builds
    the library) as fn(q, kv, o, do, idx, lse, **ours) -> (o, lse): heads
    padded to a multiple of 64 and topk to one of 128 (with -1) as its
    users do, once per input (not timed); its masking is the indices."""
    import ctypes
    lib = ctypes.CDLL(library)
    lib.flashmla_sm90_sparse_prefill.restype = ctypes.c_int
    padded = {}

    def run(q, kv, o, do, idx, lse, **_):
        key = (q.data_ptr(), idx.data_ptr())
        if key not in padded:
            s, h, d = q.shape
            hp, kp = -(-h // 64) * 64, -(-idx.shape[-1] // 128) * 128
            qp = torch.zeros(s, hp, d, dtype=q.dtype, device=q.device)
            qp[:, :h] = q
            ip = torch.full((s, kp), -1, dtype=torch.int32, device=q.device)
            ip[:, :idx.shape[-1]] = idx.view(s, -1)
            padded.clear()
            padded[key] = (qp, ip, torch.empty(s, hp, D, dtype=q.dtype, device=q.device),
                           torch.empty(s, hp, device=q.device), torch.empty(s, hp, device=q.device))
        qp, ip, out, max_logits, lse_out = padded[key]
        s, hp, d = qp.shape
        error = ctypes.create_string_buffer(512)
        p = ctypes.c_void_p
        status = lib.flashmla_sm90_sparse_prefill(
            s, kv.shape[0], hp, d, ip.shape[1], ctypes.c_float(d ** -0.5),
            p(qp.data_ptr()), hp * d, d, p(kv.data_ptr()), d, p(ip.data_ptr()), ip.shape[1],
            None, None, p(out.data_ptr()), p(max_logits.data_ptr()), p(lse_out.data_ptr()),
            torch.cuda.get_device_properties(q.device).multi_processor_count,
            p(torch.cuda.current_stream(q.device).cuda_stream), error, len(error))
        if status:
            raise RuntimeError(f"flashmla_sm90: {error.value.decode()}")
        return out[:, :q.shape[1]], lse_out[:, :q.shape[1]]
    return run


def tilelang(directory):
    """TileLang's example forwards (tile-ai/tilelang examples/deepseek_v32:
    sparse_mla_fwd.py and sparse_mla_fwd_pipelined.py in `directory`,
    carried with TileLang's wheels, never committed; they compile at run
    time) as fn(q, kv, o, do, idx, lse, **ours) -> (o, lse). Their causal
    mask is `index <= position`, so a -1 slot becomes Skv (masked), and kv
    gets one more row, which the plain example reads for masked slots. The
    plain one has no query offset: it runs where S = Skv only."""
    sys.path.insert(0, directory)
    import sparse_mla_fwd as plain
    import sparse_mla_fwd_pipelined as pipelined
    inputs = {}

    def batched(q, kv, idx):
        key = (q.data_ptr(), idx.data_ptr())
        if key not in inputs:
            skv = kv.shape[0]
            kv_padded = torch.cat([kv, kv.new_zeros(1, *kv.shape[1:])])[None].contiguous()
            idx_masked = torch.where(idx < 0, skv, idx)[None].contiguous()
            inputs.clear()
            inputs[key] = (q[None].contiguous(), kv_padded, idx_masked)
        return inputs[key]

    def run_plain(q, kv, o, do, idx, lse, q_offset=0, **_):
        if q_offset:
            raise ValueError("TileLang's sparse_mla_fwd has no query offset (S < Skv)")
        o, lse = plain.sparse_mla_fwd_interface(*batched(q, kv, idx))
        return o[0], lse[0]

    def run_pipelined(q, kv, o, do, idx, lse, q_offset=0, **_):
        o, lse = pipelined.sparse_mla_fwd_interface(*batched(q, kv, idx), q_offset, 1)
        return o[0], lse[0]
    return {"tilelang_fwd": run_plain, "tilelang_fwd_pipelined": run_pipelined}


def agreement(fn, args, skv, tokens=128):
    """The cosine between a forward's o and the float64 reference's on the
    last `tokens` queries (a peer's timings count once they agree)."""
    from .reference import sparse_mla_fwd_reference
    q, kv, _, _, idx, _ = args
    s = q.shape[0]
    o = fn(*args, q_offset=skv - s)[0]
    first = max(0, s - tokens)
    want, _ = sparse_mla_fwd_reference(q[first:], kv, idx[first:], q_offset=skv - s + first)
    a, b = o[first:].double().flatten(), want.double().flatten()
    return float(torch.nn.functional.cosine_similarity(a, b, dim=0))


def time_it(fn, args, reps, **kwargs):
    flush = torch.empty(10 * _runtime.target()["l2_bytes"], dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn(*args, **kwargs)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args, **kwargs)
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


def measure(shapes, patterns, topk, reps, with_reference, d_tail=D_TAIL, deterministic=False,
            pass_="bwd"):
    import sparse_mla
    rows = []
    kernels = peers(with_reference, deterministic, pass_)
    print("device", torch.cuda.get_device_name(), "kernels", list(kernels), flush=True)
    warm_up()
    for pattern in patterns:
        for s, skv, h in shapes:
            args = make_inputs(s, h, topk, pattern, d_tail=d_tail, skv=skv)
            tiles = sparse_mla.plan.tile_tokens(h, s, skv, topk)
            for name, fn in kernels.items():
                if name == "sparse_mla_t1" and tiles == 1:
                    continue  # the same call as sparse_mla
                row = dict(kind="time", peer=name, S=s, Skv=skv, H=h, topk=topk,
                           pattern=pattern, d_tail=d_tail, **{"pass": pass_})
                stats = {}
                ours = dict(q_offset=skv - s) if name == "reference" else \
                    dict(q_offset=skv - s, stats=stats)
                t0 = time.time()
                try:
                    if pass_ == "fwd" and name != "reference":
                        row["cos"] = agreement(fn, args, skv)
                        if not row["cos"] >= 0.9999:
                            raise RuntimeError(f"o disagrees with float64: cosine {row['cos']}")
                    med, low = time_it(fn, args, 3 if name == "reference" else reps, **ours)
                    row.update(ms=med, ms_min=low,
                               tflops=flops(s, h, topk, d_tail, pass_) / med / 1e9,
                               wall_s=round(time.time() - t0, 1))
                    if name.startswith("sparse_mla"):
                        row["tile_tokens"] = stats["tile_tokens"]
                        row["range_keys"] = stats.get("range_keys", 0)
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


_TITLES = {"bwd": "backward", "fwd": "forward", "step": "training step (forward + backward)"}


def table(run):
    """The markdown of a run: per pass and pattern, ours against the others."""
    topk = run.get("topk") or run["rows"][0]["topk"]
    d_tail = run.get("d_tail", D_TAIL)
    out = [f"# Sparse MLA, {run['device']}, {run['date']}, {source(run)}\n",
           f"`{run['command']}` (DESIGN.md section 6, topk {topk}, D_tail {d_tail}; medians in ms; "
           "`T` is the token tile sparse_mla chose; `per token` is token_tile=1, timed "
           "where T > 1; ratios are within this run).\n"]
    for pass_ in PASSES:
        timed = [r for r in run["rows"] if "ms" in r and r.get("pass", "bwd") == pass_]
        for pattern in dict.fromkeys(r["pattern"] for r in timed):
            rows = {}
            for r in timed:
                if r["pattern"] == pattern:
                    rows.setdefault((r["S"], r.get("Skv", r["S"]), r["H"]), {})[r["peer"]] = r
            out.append(f"## The {_TITLES[pass_]}, pattern `{pattern}`\n")
            out += _backward_rows(rows) if pass_ == "bwd" else _rows(rows)
            out.append("")
    return "\n".join(out)


def _rows(rows):
    """A forward's or a training step's rows: ours, per token, and each
    other kernel of the run (its time and ours against it)."""
    others = sorted({p for by in rows.values() for p in by
                     if not p.startswith("sparse_mla") and p != "reference"})
    out = ["| S | Skv | H | T | ours ms | TFLOP/s | per token ms | x per token |"
           + "".join(f" {p} ms | x {p} |" for p in others),
           "|---|---|---|---|---|---|---|---|" + "---|---|" * len(others)]
    for (s, skv, h), by in sorted(rows.items()):
        ours = by.get("sparse_mla")
        if not ours:
            continue
        t1 = by.get("sparse_mla_t1", {}).get("ms")
        cells = [s, skv, h, ours.get("tile_tokens", "-"), f"{ours['ms']:.2f}",
                 f"{ours['tflops']:.0f}", f"{t1:.2f}" if t1 else "-",
                 f"{t1 / ours['ms']:.2f}" if t1 else "-"]
        for p in others:
            ms = by.get(p, {}).get("ms")
            cells += [f"{ms:.2f}" if ms else "-", f"{ms / ours['ms']:.2f}" if ms else "-"]
        out.append("| " + " | ".join(map(str, cells)) + " |")
    return out


def _backward_rows(rows):
    """The backward's rows: ours, per token, cuDNN-frontend, deterministic."""
    out = ["| S | Skv | H | T | key range | ours ms | TFLOP/s | per token ms | cuDNN ms "
           "| x cuDNN | x per token | deterministic ms | its cost | det. x cuDNN |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (s, skv, h), by in sorted(rows.items()):
        ours = by.get("sparse_mla")
        if not ours:
            continue
        t1 = by.get("sparse_mla_t1", {}).get("ms")
        cd = by.get("cudnn_fe_sm90", {}).get("ms")
        det = by.get("sparse_mla_det", {}).get("ms")
        out.append("| " + " | ".join(map(str, [
            s, skv, h, ours.get("tile_tokens", "-"), ours.get("range_keys") or "-",
            f"{ours['ms']:.2f}", f"{ours['tflops']:.0f}",
            f"{t1:.2f}" if t1 else "-", f"{cd:.2f}" if cd else "-",
            f"{cd / ours['ms']:.2f}" if cd else "-",
            f"{t1 / ours['ms']:.2f}" if t1 else "-",
            f"{det:.2f}" if det else "-", f"{det / ours['ms'] - 1:+.0%}" if det else "-",
            f"{cd / det:.2f}" if det and cd else "-"])) + " |")
    return out


def plot(run, path, pass_="bwd"):
    """TFLOP/s of one pass against S, a panel per H; False without
    matplotlib or rows."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = [r for r in run["rows"] if "ms" in r and r["peer"] != "reference"
             and r.get("pass", "bwd") == pass_]
    if not timed:
        return False
    heads = sorted({r["H"] for r in timed})
    fig, axes = plt.subplots(1, len(heads), figsize=(3.6 * len(heads), 3.6), squeeze=False)
    colors = {"sparse_mla": "C0", "sparse_mla_t1": "C2", "cudnn_fe_sm90": "C3",
              "sparse_mla_det": "C1"}
    labels = {"sparse_mla": "sparse_mla", "sparse_mla_t1": "sparse_mla per token",
              "cudnn_fe_sm90": "cuDNN-frontend SM90",
              "sparse_mla_det": "sparse_mla deterministic"}
    for ax, h in zip(axes[0], heads):
        lines = {(r["peer"], r["pattern"], r["S"] == r.get("Skv", r["S"]))
                 for r in timed if r["H"] == h}
        for (peer, pattern, full) in sorted(lines):
            pts = sorted((r.get("Skv", r["S"]), r["tflops"]) for r in timed
                         if r["H"] == h and r["peer"] == peer and r["pattern"] == pattern
                         and (r["S"] == r.get("Skv", r["S"])) == full)
            style = ("-" if pattern == "random" else "--") if full else ":"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if full else "s",
                    color=colors.get(peer, "C7"), linestyle=style,
                    label=f"{labels.get(peer, peer)}, {pattern}" + ("" if full else ", tail"))
        ax.set_xscale("log", base=2)
        ax.set_title(f"H = {h}")
        ax.set_xlabel("Skv (S = Skv, or tail queries; topk 2048)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("TFLOP/s")
    legend = {}
    for ax in axes[0]:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(name, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=3, fontsize=8,
               frameon=False)
    fig.suptitle(f"Sparse-MLA {_TITLES[pass_]}, {run['device']}, {run['date']}, {source(run)}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=110)
    return True


def write(run, out):
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(run, indent=1) + "\n")
    (out / "bench.md").write_text(table(run))
    # A plot per pass: bench.png (the backward), bench-fwd.png, bench-step.png.
    drew = [name for p in PASSES
            if plot(run, out / (name := "bench.png" if p == "bwd" else f"bench-{p}.png"), p)]
    print(f"wrote {out}/bench.json, bench.md" + (", " + ", ".join(drew) if drew else
                                                 " (no plot: no matplotlib or no rows)"))


def parse_shape(text):
    """(S, Skv, H) of "SxH" (S = Skv) or "S:SkvxH" (S tail queries of Skv keys)."""
    lengths, h = text.split("x")
    s, colon, skv = lengths.partition(":")
    s, skv = int(s), int(skv) if colon else int(s)
    if not 0 < s <= skv:
        raise ValueError(text)
    return s, skv, int(h)


def main(argv=None):
    import sparse_mla
    ap = argparse.ArgumentParser(prog="python3 -m sparse_mla.bench",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(f"{s}x{h}" for s in (2048, 4096, 8192, 16384)
                                                 for h in (8, 16, 32, 64, 128)),
                    help="SxH (S = Skv) or S:SkvxH (S tail queries of Skv keys),... (default: "
                         "the sweep of DESIGN.md section 6 and H=8)")
    ap.add_argument("--patterns", default="random,correlated")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--d-tail", type=int, default=D_TAIL, choices=(0, D_TAIL),
                    help="columns of q and kv past D (the rope part): 64, or 0")
    ap.add_argument("--reference", action="store_true", help="also time the PyTorch reference")
    ap.add_argument("--deterministic", action="store_true",
                    help="also time deterministic=True (sparse_mla_det); a training step: "
                         "its backward deterministic")
    ap.add_argument("--pass", dest="pass_", default="bwd", choices=PASSES,
                    help="the backward (default), the forward or a training step")
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
        shapes = [parse_shape(x) for x in a.shapes.split(",")]
    except ValueError:
        ap.error(f"--shapes must be SxH or S:SkvxH (S <= Skv),..., got {a.shapes!r}")
    patterns = a.patterns.split(",")
    if not set(patterns) <= {"random", "correlated"}:
        ap.error(f"--patterns must be random and/or correlated, got {a.patterns!r}")
    rows = measure(shapes, patterns, a.topk, a.reps, a.reference, a.d_tail, a.deterministic,
                   a.pass_)
    run = dict(date=datetime.date.today().isoformat(), version=sparse_mla.__version__,
               device=torch.cuda.get_device_name(), topk=a.topk, d_tail=a.d_tail,
               command="python3 -m sparse_mla.bench " + " ".join(argv or sys.argv[1:]),
               protocol="DESIGN.md section 6", rows=rows)
    write(run, Path(a.out))
    failed = [r for r in rows if "error" in r and r["peer"].startswith("sparse_mla")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
