"""Context parallelism with sparse_mla: one backward step over ranks.

Each rank owns a contiguous chunk of one sequence: its queries at positions
[offset, offset + S_r) and the KV rows of the same positions. Attention
reaches every earlier key, so a step

1. all-gathers the KV rows (the backward reads any of them),
2. runs ``sparse_mla_bwd`` for its own queries with ``q_offset=offset``,
   adding dKV of all Skv rows into a caller-owned fp32 accumulator
   (``dkv_out=..., accumulate=True``; with ``dq_out`` and a ``workspace``
   the call allocates nothing, so micro-batches add into one buffer),
3. reduce-scatters the accumulators: each rank gets the dKV of its rows.

Collectives go through torch.distributed. NCCL takes CUDA tensors; gloo
has no reduce-scatter, so with gloo the tensors are staged through the host
and the sum is an all-reduce of which each rank keeps its rows.

    torchrun --nproc-per-node 2 examples/context_parallel.py --backend nccl
    python3 examples/context_parallel.py --world 2 --backend gloo   # one GPU

The script checks each rank's gradients against one call over the whole
sequence and prints the largest differences.
"""
import argparse
import os

import torch
import torch.distributed as dist

import sparse_mla
from sparse_mla.reference import causal_indices, sparse_mla_fwd_reference


def chunk_bounds(total, world, rank, sizes=None):
    """[start, end) of a rank's chunk: `sizes` if given, else even chunks."""
    sizes = sizes or [total // world + (r < total % world) for r in range(world)]
    start = sum(sizes[:rank])
    return start, start + sizes[rank], sizes


def _staged(t, backend):
    return t.cpu() if backend == "gloo" else t


def all_gather_rows(local, sizes, backend):
    """The rows of every rank's chunk, in rank order (chunks may differ in
    size: they are padded to the largest for the collective)."""
    width = max(sizes)
    padded = local.new_zeros((width, *local.shape[1:]))
    padded[:local.shape[0]] = local
    parts = [_staged(torch.empty_like(padded), backend) for _ in sizes]
    dist.all_gather(parts, _staged(padded, backend))
    return torch.cat([p[:n].to(local.device) for p, n in zip(parts, sizes)])


def reduce_scatter_rows(full, sizes, rank, backend):
    """The sum over ranks of `full` [Skv, ...], rows of this rank's chunk."""
    start = sum(sizes[:rank])
    if backend == "nccl":
        width = max(sizes)
        padded = [full.new_zeros((width, *full.shape[1:])) for _ in sizes]
        at = 0
        for p, n in zip(padded, sizes):
            p[:n] = full[at:at + n]
            at += n
        out = full.new_empty((width, *full.shape[1:]))
        dist.reduce_scatter(out, padded)
        return out[:sizes[rank]]
    host = full.cpu()
    dist.all_reduce(host)
    return host[start:start + sizes[rank]].to(full.device)


def cp_backward_step(q, kv_local, o, do, indices, lse, offset, sizes, rank, backend,
                     dkv_acc=None, **kwargs):
    """One rank's backward: (dq of its queries, dkv of its KV rows). dkv_acc,
    an fp32 [Skv, G, Dqk] buffer, receives this rank's dKV of every key
    first (it is added to: pass it again for each micro-batch)."""
    kv = all_gather_rows(kv_local, sizes, backend)
    if dkv_acc is None:
        dkv_acc = torch.zeros(kv.shape, dtype=torch.float32, device=kv.device)
    dq = torch.empty_like(q)
    ws = torch.empty(sparse_mla.workspace_bytes(q, kv, o, do, indices, lse, **kwargs),
                     dtype=torch.uint8, device=q.device)
    sparse_mla.sparse_mla_bwd(q, kv, o, do, indices, lse, q_offset=offset, dq_out=dq,
                              dkv_out=dkv_acc, accumulate=True, workspace=ws, **kwargs)
    return dq, reduce_scatter_rows(dkv_acc, sizes, rank, backend)


def make_problem(total, heads, topk, seed=0, device="cuda", dtype=torch.float64):
    """One sequence of `total` tokens: q, kv, o, do, indices, lse (unbatched);
    o and lse from the reference forward in `dtype`."""
    gen = torch.Generator(device=device).manual_seed(seed)
    q = torch.randn(total, heads, 576, device=device, generator=gen).bfloat16()
    kv = torch.randn(total, 1, 576, device=device, generator=gen).bfloat16()
    idx = causal_indices(1, total, 1, topk, generator=gen, device=device)[0]
    o, lse = sparse_mla_fwd_reference(q, kv, idx, dtype=dtype)
    do = torch.randn(o.shape, device=device, generator=gen).bfloat16()
    return q, kv, o, do, idx, lse


def run_rank(rank, world, backend, total, heads, topk, sizes=None, deterministic=True):
    """A rank's step on its chunk of make_problem's sequence: its dq, its dkv
    rows, and the bounds of its chunk."""
    q, kv, o, do, idx, lse = make_problem(total, heads, topk)
    start, end, sizes = chunk_bounds(total, world, rank, sizes)
    rows = slice(start, end)
    dq, dkv = cp_backward_step(q[rows], kv[rows], o[rows], do[rows], idx[rows], lse[rows],
                               start, sizes, rank, backend, deterministic=deterministic)
    return dq, dkv, (start, end)


def time_step(rank, world, backend, total, heads, topk, reps=10):
    """Milliseconds (medians over `reps`, CUDA events) of a rank's step:
    the all-gather of KV, the backward, the reduce-scatter of dKV, the whole
    step; and, on rank 0, one backward of the whole sequence on one GPU."""
    import statistics
    q, kv, o, do, idx, lse = make_problem(total, heads, topk, dtype=torch.float32)
    start, end, sizes = chunk_bounds(total, world, rank)
    rows = slice(start, end)
    mine = [t[rows] for t in (q, o, do, idx, lse)]
    dq = torch.empty_like(mine[0])
    acc = torch.zeros(kv.shape, dtype=torch.float32, device=kv.device)
    ws = torch.empty(sparse_mla.workspace_bytes(mine[0], kv, mine[1], mine[2], mine[3],
                                                mine[4]), dtype=torch.uint8, device=q.device)
    times = {"all-gather": [], "backward": [], "reduce-scatter": [], "step": []}
    for i in range(reps + 2):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        dist.barrier()
        ev[0].record()
        full = all_gather_rows(kv[rows], sizes, backend)
        ev[1].record()
        sparse_mla.sparse_mla_bwd(mine[0], full, mine[1], mine[2], mine[3], mine[4],
                                  q_offset=start, dq_out=dq, dkv_out=acc, workspace=ws)
        ev[2].record()
        reduce_scatter_rows(acc, sizes, rank, backend)
        ev[3].record()
        torch.cuda.synchronize()
        if i >= 2:  # warm-up first
            for name, (a, b) in zip(times, ((0, 1), (1, 2), (2, 3), (0, 3))):
                times[name].append(ev[a].elapsed_time(ev[b]))
    out = {name: statistics.median(v) for name, v in times.items()}
    if rank == 0:
        single = []
        for i in range(reps + 2):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse)
            b.record()
            torch.cuda.synchronize()
            if i >= 2:
                single.append(a.elapsed_time(b))
        out["one GPU, whole sequence"] = statistics.median(single)
    return out


def _worker(rank, world, backend, init, args, out_dir, timing):
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(backend, init_method=init, rank=rank, world_size=world)
    try:
        if timing:
            result = {"times": time_step(rank, world, backend, *args[:3])}
        else:
            dq, dkv, bounds = run_rank(rank, world, backend, *args)
            result = {"dq": dq.cpu(), "dkv": dkv.cpu(), "bounds": bounds}
        torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def spawn(world, backend, total, heads, topk, sizes=None, deterministic=True, out_dir=".",
          timing=False):
    """Runs `world` ranks as processes of this host (one GPU may serve them
    all with gloo) and returns each rank's saved results (or, with
    timing=True, its time_step figures)."""
    import tempfile
    import torch.multiprocessing as mp
    init = "file://" + tempfile.mktemp(prefix="sparse_mla_cp_")
    mp.spawn(_worker, args=(world, backend, init, (total, heads, topk, sizes, deterministic),
                            out_dir, timing), nprocs=world, join=True)
    return [torch.load(os.path.join(out_dir, f"rank{r}.pt")) for r in range(world)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--world", type=int, default=2, help="ranks to spawn without torchrun")
    p.add_argument("--tokens", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--topk", type=int, default=256)
    p.add_argument("--time", action="store_true",
                   help="time a step (all-gather, backward, reduce-scatter) against one GPU")
    a = p.parse_args()
    if "RANK" in os.environ:  # under torchrun
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
        dist.init_process_group(a.backend)
        _, _, (start, end) = run_rank(rank, world, a.backend, a.tokens, a.heads, a.topk)
        dist.destroy_process_group()
        print(f"rank {rank}: queries and kv rows [{start}, {end})")
        return
    import tempfile
    if a.time:
        with tempfile.TemporaryDirectory() as out:
            results = spawn(a.world, a.backend, a.tokens, a.heads, a.topk, out_dir=out,
                            timing=True)
        print(f"{a.world} ranks ({a.backend}), {a.tokens} tokens, H={a.heads}, topk {a.topk}, "
              f"{torch.cuda.get_device_name()}; medians in ms")
        for r, res in enumerate(results):
            t = res["times"]
            comm = t["all-gather"] + t["reduce-scatter"]
            print(f"rank {r}: " + ", ".join(f"{k} {v:.2f}" for k, v in t.items())
                  + f"; communication {comm / t['step']:.0%} of the step")
        return
    with tempfile.TemporaryDirectory() as out:
        results = spawn(a.world, a.backend, a.tokens, a.heads, a.topk, out_dir=out)
    q, kv, o, do, idx, lse = make_problem(a.tokens, a.heads, a.topk)
    dq, dkv = sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, deterministic=True,
                                        dkv_dtype=torch.float32)
    for r, res in enumerate(results):
        start, end = res["bounds"]
        ddq = (res["dq"].float() - dq[start:end].cpu().float()).abs().max().item()
        ddkv = (res["dkv"] - dkv[start:end].cpu()).abs().max().item()
        print(f"rank {r} [{start}, {end}): max |dq - single| {ddq:.3g}, "
              f"max |dkv - single| {ddkv:.3g}")


if __name__ == "__main__":
    main()
