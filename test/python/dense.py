"""Sparse MLA's forward written densely with autograd (the float64 oracle of
the gradient tests), independent of sparse_mla.reference's chunked loops."""
import torch


def dense_attention(q, kv, idx, sm_scale, causal, sink, d_v=512):
    """o of sparse MLA in float64 with autograd (the reference's math)."""
    b, s, h, dqk = q.shape
    skv, g = kv.shape[1], kv.shape[2]
    pos = torch.arange(s, device=q.device).view(1, s, 1, 1)
    valid = (idx >= 0) & (idx < skv)
    if causal:
        valid &= idx <= pos
    safe = torch.where(valid, idx, 0).long()
    k = kv[torch.arange(b, device=q.device).view(b, 1, 1, 1), safe,
           torch.arange(g, device=q.device).view(1, 1, g, 1)]          # [b, s, g, topk, dqk]
    qg = q.view(b, s, g, h // g, dqk)
    scores = torch.einsum("bsghd,bsgkd->bsghk", qg, k) * sm_scale
    scores = scores.masked_fill(~valid[:, :, :, None, :], float("-inf"))
    lse = torch.logsumexp(scores, -1, keepdim=True)
    denom = torch.logaddexp(lse, sink.view(1, 1, g, h // g, 1))
    p = torch.exp(scores - denom).masked_fill(~valid[:, :, :, None, :], 0)
    return torch.einsum("bsghk,bsgkd->bsghd", p, k[..., :d_v]).reshape(b, s, h, d_v)
