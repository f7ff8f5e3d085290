"""A small forward for compute-sanitizer (memcheck, racecheck, synccheck):
invalid, repeated and out-of-range indices, rows without a valid key, padded
heads, topk not a multiple of 64, D_tail 64 and 0, per token and in token
tiles of 2, 4 and 8, with topk_length, a sink (-inf, +inf and finite), a
query offset and the KL target's pass; then sparse_mla's forward and backward
in the deterministic mode."""
import torch

import sparse_mla

torch.manual_seed(0)
s, skv, topk = 8, 80, 70
idx = torch.randint(-2, skv + 5, (1, s, 1, topk), device="cuda", dtype=torch.int32)
idx[0, :, 0, 5:9] = 3
idx[0, 6] = -1
lengths = torch.randint(-2, topk + 3, (1, s), device="cuda", dtype=torch.int32)
for dqk in (576, 512):
    kv = torch.randn(1, skv, 1, dqk, device="cuda").bfloat16()
    for heads, tile in ((24, 1), (64, 1), (128, 1), (16, 2), (16, 4), (8, 8)):
        q = torch.randn(1, s, heads, dqk, device="cuda").bfloat16()
        sink = torch.randn(heads, device="cuda")
        sink[0], sink[1] = float("-inf"), float("inf")
        sparse_mla.sparse_mla_fwd(q, kv, idx, token_tile=tile)
        sparse_mla.sparse_mla_fwd(q, kv, idx, token_tile=tile, topk_length=lengths,
                                  attn_sink=sink, q_offset=3, is_causal=False,
                                  return_kl_target=True)
q = torch.randn(1, s, 16, 576, device="cuda").bfloat16().requires_grad_()
kv = torch.randn(1, skv, 1, 576, device="cuda").bfloat16().requires_grad_()
sparse_mla.sparse_mla(q, kv, idx, deterministic=True).float().sum().backward()
torch.cuda.synchronize()
print("sanitize_fwd: done")
