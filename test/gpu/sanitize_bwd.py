"""A small backward for compute-sanitizer (memcheck, racecheck): invalid,
repeated and out-of-range indices, padded heads, topk not a multiple of 64,
D_tail 64 and 0, per token and in token tiles."""
import torch

import sparse_mla
from sparse_mla.reference import sparse_mla_fwd_reference

torch.manual_seed(0)
s, skv, h, topk = 8, 80, 24, 70
idx = torch.randint(-2, skv + 5, (1, s, 1, topk), device="cuda", dtype=torch.int32)
idx[0, :, 0, 5:9] = 3
# Both compiled widths of a kv row (D_tail 64 and 0: their dKV pieces are
# scheduled differently, tile-split-d). One variant of each size per token,
# and token tiles of 2, 4 and 8 tokens (16, 16 and 8 heads: union builder
# and tiled backward).
for dqk in (576, 512):
    q = torch.randn(1, s, h, dqk, device="cuda").bfloat16()
    kv = torch.randn(1, skv, 1, dqk, device="cuda").bfloat16()
    for heads, tile in ((24, 1), (64, 1), (16, 2), (16, 4), (8, 8)):
        qh = q[:, :, :1].expand(1, s, heads, dqk).contiguous() if heads != h else q
        oh, lseh = sparse_mla_fwd_reference(qh, kv, idx)
        sparse_mla.sparse_mla_bwd(qh, kv, oh, torch.randn_like(oh), idx, lseh, token_tile=tile)
torch.cuda.synchronize()
print("sanitize_bwd: done")
