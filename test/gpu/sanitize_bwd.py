"""A small backward for compute-sanitizer (memcheck, racecheck): invalid,
repeated and out-of-range indices, padded heads, topk not a multiple of 64,
D_tail 64 and 0, per token and in token tiles; then the training paths:
topk_length, attention sinks, a query offset, the deterministic (fixed
point) variants, accumulating into caller-owned outputs from a workspace
with room for one tile's union a launch; and the key ranges' clock (ranges
of 64 keys, per token and in tiles, in both modes, with a round larger than
the GPU holds so that its waits run out)."""
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
lengths = torch.randint(-2, topk + 3, (1, s), device="cuda", dtype=torch.int32)
sink = torch.randn(h, device="cuda")
sink[0], sink[1] = float("-inf"), float("inf")
for heads, tile in ((24, 1), (64, 1), (16, 4), (8, 8)):
    qh = q[:, :, :1].expand(1, s, heads, 512).contiguous() if heads != h else q
    oh, lseh = sparse_mla_fwd_reference(qh, kv, idx)
    args = (qh, kv, oh, torch.randn_like(oh), idx, lseh)
    extra = dict(token_tile=tile, topk_length=lengths, attn_sink=sink[:1].expand(heads).contiguous(),
                 q_offset=3)
    small = sparse_mla.workspace_bytes(*args, attn_sink=extra["attn_sink"], deterministic=True,
                                       token_tile=tile, union_bytes=1)
    ws = torch.empty(small, dtype=torch.uint8, device="cuda")
    dkv = torch.zeros(kv.shape, device="cuda")
    for det in (False, True):
        sparse_mla.sparse_mla_bwd(*args, **extra, deterministic=det, dkv_out=dkv,
                                  accumulate=True, workspace=ws if det else None)
kv_long = torch.randn(1, 700, 1, 512, device="cuda").bfloat16()
idx_long = torch.randint(-2, 705, (1, s, 1, topk), device="cuda", dtype=torch.int32)
for heads, tile, round_size in ((64, 1, None), (16, 4, None), (64, 1, 1 << 20)):
    if round_size:
        sparse_mla._runtime.resident_ctas = lambda name, device: round_size
    qh = q[:, :, :1].expand(1, s, heads, 512).contiguous()
    oh, lseh = sparse_mla_fwd_reference(qh, kv_long, idx_long)
    for det in (False, True):
        sparse_mla.sparse_mla_bwd(qh, kv_long, oh, torch.randn_like(oh), idx_long, lseh,
                                  token_tile=tile, key_ranges=64, is_causal=False,
                                  deterministic=det)
torch.cuda.synchronize()
print("sanitize_bwd: done")
