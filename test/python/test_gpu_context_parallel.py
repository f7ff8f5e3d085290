"""examples/context_parallel.py with two ranks: gloo on one GPU (staging
through the host), and NCCL where two GPUs are present (tools/gpu.sh cp);
each rank's dq and dkv rows against one call over the whole sequence."""
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

EXAMPLES = str(Path(__file__).resolve().parents[2] / "examples")


def load_example():
    # An importable module: the spawned ranks import it by name (sys.path
    # travels to them).
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    import context_parallel
    return context_parallel


BACKENDS = [
    "gloo",
    pytest.param("nccl", marks=pytest.mark.skipif(
        not torch.cuda.is_available() or torch.cuda.device_count() < 2,
        reason="NCCL ranks need two GPUs")),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("heads", [16, 64])
@pytest.mark.parametrize("sizes", [[256, 256], [201, 311]])
def test_two_ranks_match_one_call(tmp_path, backend, heads, sizes):
    import sparse_mla
    cp = load_example()
    total, topk = sum(sizes), 128
    results = cp.spawn(2, backend, total, heads, topk, sizes=sizes, out_dir=str(tmp_path))
    q, kv, o, do, idx, lse = cp.make_problem(total, heads, topk)
    dq, dkv = sparse_mla.sparse_mla_bwd(q, kv, o, do, idx, lse, deterministic=True,
                                        dkv_dtype=torch.float32)
    dq, dkv = dq.cpu(), dkv.cpu()
    for res in results:
        start, end = res["bounds"]
        want_dq, want_dkv = dq[start:end], dkv[start:end]
        # Chunks that start and end on token-tile boundaries (256 is one for
        # every T) form the same tiles, hence the same dq bitwise.
        if start % 8 == 0 and (end % 8 == 0 or end == total):
            assert torch.equal(res["dq"], want_dq)
        else:  # other tiles: bf16 roundings of sums in another order
            err = (res["dq"].float() - want_dq.float()).norm() / want_dq.float().norm()
            assert err < 4e-3, f"dq of rank chunk [{start}, {end}): rel L2 {err:.2e}"
        # dkv: fp32 sums of each rank's share, in another order.
        torch.testing.assert_close(res["dkv"], want_dkv, rtol=1e-5, atol=1e-5)
