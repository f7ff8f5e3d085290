"""PyTorch references of the sparse-MLA forward and backward (DESIGN.md
section 2), in any floating dtype (float64 for the tests, float32 for the
benchmark's baseline). They process `chunk` query tokens at a time so that
the gathered keys of long sequences fit in memory."""
import math

import torch

LN2 = math.log(2.0)


def _batched(*tensors):
    return [t.unsqueeze(0) for t in tensors]


def _gather(kv_b, idx, skv, s0, is_causal, q_offset=0, lengths=None):
    """Valid mask [c, G, topk] and gathered keys [c, G, topk, Dqk] of tokens
    s0 .. s0 + c of one batch (at positions q_offset + s); `lengths` [c, G]
    keeps the first lengths (clamped to [0, topk]) slots of each row."""
    g = kv_b.shape[1]
    pos = torch.arange(s0, s0 + idx.shape[0], device=idx.device).view(-1, 1, 1) + q_offset
    valid = (idx >= 0) & (idx < skv)
    if is_causal:
        valid &= idx <= pos
    if lengths is not None:
        slot = torch.arange(idx.shape[-1], device=idx.device).view(1, 1, -1)
        valid &= slot < lengths.long().clamp(0, idx.shape[-1]).unsqueeze(-1)
    safe = torch.where(valid, idx, torch.zeros_like(idx))
    groups = torch.arange(g, device=idx.device).view(1, g, 1)
    return valid, safe, groups, kv_b[safe, groups]


def _lengths(topk_length, batched, b_, s_, g):
    """topk_length as [B, S, G] (None stays None)."""
    if topk_length is None:
        return None
    t = topk_length if batched else topk_length.unsqueeze(0)
    if t.dim() == 2:
        t = t.unsqueeze(-1)
    return t.expand(b_, s_, g)


def _with_sink(lse_nat, attn_sink, h):
    """The denominator's log with the sink: logaddexp(lse, sink[h])."""
    if attn_sink is None:
        return lse_nat
    return torch.logaddexp(lse_nat, attn_sink.to(lse_nat.dtype).view(*([1] * (lse_nat.dim() - 1)), h))


def sparse_mla_fwd_reference(q, kv, indices, sm_scale=None, is_causal=True, d_v=512,
                             lse_base2=True, dtype=torch.float64, chunk=256, topk_length=None,
                             attn_sink=None, q_offset=0, return_kl_target=False):
    """Returns (o in q's dtype, lse float32 [.., S, H]); lse is base 2 (as
    TileLang's forward returns it) unless lse_base2 is False, and over the
    keys only (with a sink [H], P = exp(s - logaddexp(lse, sink))). Rows
    without a valid key get o = 0 and lse = +inf (as cuDNN's and FlashMLA's
    forwards: P = exp(s - lse) is 0 for them in any backward). With
    return_kl_target, also kl_target [.., S, G, topk] in `dtype`: per slot,
    the mean of P over the group's heads (0 for invalid slots)."""
    batched = q.dim() == 4
    if not batched:
        q, kv, indices = _batched(q, kv, indices)
    b_, s_, h, dqk = q.shape
    skv, g = kv.shape[1], kv.shape[2]
    hg = h // g
    lengths = _lengths(topk_length, batched, b_, s_, g)
    sm_scale = dqk ** -0.5 if sm_scale is None else sm_scale
    o = torch.empty(b_, s_, h, d_v, dtype=q.dtype, device=q.device)
    lse = torch.empty(b_, s_, h, dtype=torch.float32, device=q.device)
    kl = torch.empty(b_, s_, g, indices.shape[-1], dtype=dtype, device=q.device)
    for b in range(b_):
        for s0 in range(0, s_, chunk):
            idx = indices[b, s0:s0 + chunk].long()
            c = idx.shape[0]
            valid, _, _, k = _gather(kv[b], idx, skv, s0, is_causal, q_offset,
                                     None if lengths is None else lengths[b, s0:s0 + c])
            k = k.to(dtype)
            qg = q[b, s0:s0 + c].to(dtype).view(c, g, hg, dqk)
            s = torch.einsum("cghd,cgkd->cghk", qg, k) * sm_scale
            s = s.masked_fill(~valid[:, :, None, :], float("-inf"))
            m = torch.logsumexp(s, dim=-1, keepdim=True)
            denom = _with_sink(m.view(c, h), attn_sink, h).view(c, g, hg, 1)
            p = torch.where(valid[:, :, None, :], torch.exp(s - denom), torch.zeros_like(s))
            o[b, s0:s0 + c] = torch.einsum("cghk,cgkd->cghd", p, k[..., :d_v]).reshape(
                c, h, d_v).to(q.dtype)
            kl[b, s0:s0 + c] = p.mean(2)
            m = m.view(c, h)
            m = torch.where(m == float("-inf"), torch.full_like(m, float("inf")), m)
            lse[b, s0:s0 + c] = (m / LN2 if lse_base2 else m).float()
    if not batched:
        o, lse, kl = o[0], lse[0], kl[0]
    return (o, lse, kl) if return_kl_target else (o, lse)


def sparse_mla_bwd_reference(q, kv, o, do, indices, lse, sm_scale=None, is_causal=True,
                             lse_base2=True, dtype=torch.float64, chunk=256, topk_length=None,
                             attn_sink=None, q_offset=0):
    """(dq, dkv) in `dtype`, from the same inputs as sparse_mla_bwd; with
    attn_sink [H], (dq, dkv, d_sink)."""
    batched = q.dim() == 4
    if not batched:
        q, kv, o, do, indices, lse = _batched(q, kv, o, do, indices, lse)
    b_, s_, h, dqk = q.shape
    skv, g = kv.shape[1], kv.shape[2]
    d_v = o.shape[-1]
    hg = h // g
    lengths = _lengths(topk_length, batched, b_, s_, g)
    sm_scale = dqk ** -0.5 if sm_scale is None else sm_scale
    dq = torch.zeros(q.shape, dtype=dtype, device=q.device)
    dkv = torch.zeros(kv.shape, dtype=dtype, device=q.device)
    delta = (o.to(dtype) * do.to(dtype)).sum(-1)
    lse_nat = lse.to(dtype) * (LN2 if lse_base2 else 1.0)
    denom = _with_sink(lse_nat, attn_sink, h)
    for b in range(b_):
        for s0 in range(0, s_, chunk):
            idx = indices[b, s0:s0 + chunk].long()
            c = idx.shape[0]
            valid, safe, groups, k = _gather(kv[b], idx, skv, s0, is_causal, q_offset,
                                             None if lengths is None else lengths[b, s0:s0 + c])
            k = k.to(dtype)
            qg = q[b, s0:s0 + c].to(dtype).view(c, g, hg, dqk)
            dog = do[b, s0:s0 + c].to(dtype).view(c, g, hg, d_v)
            s = torch.einsum("cghd,cgkd->cghk", qg, k) * sm_scale
            p = torch.exp(s - denom[b, s0:s0 + c].view(c, g, hg, 1))
            p = torch.where(valid[:, :, None, :], p, torch.zeros_like(p))
            dp = torch.einsum("cghd,cgkd->cghk", dog, k[..., :d_v])
            ds = p * (dp - delta[b, s0:s0 + c].view(c, g, hg, 1)) * sm_scale
            dq[b, s0:s0 + c] = torch.einsum("cghk,cgkd->cghd", ds, k).reshape(c, h, dqk)
            dk = torch.einsum("cghk,cghd->cgkd", ds, qg)
            dk[..., :d_v] += torch.einsum("cghk,cghd->cgkd", p, dog)
            dkv[b].index_put_((safe, groups.expand_as(safe)), dk, accumulate=True)
    if not batched:
        dq, dkv = dq[0], dkv[0]
    if attn_sink is None:
        return dq, dkv
    # The sink's probability is sigmoid(sink - lse); -inf is no sink.
    sink = attn_sink.to(dtype)
    w = torch.sigmoid(sink - lse_nat)
    w = torch.where(sink == float("-inf"), torch.zeros_like(w), w)
    d_sink = -(w * delta).reshape(-1, h).sum(0)
    return dq, dkv, d_sink


def causal_indices(b, s, g, topk, skv=None, device="cuda", generator=None, chunk=1024,
                   q_offset=0):
    """The benchmark's index pattern (DESIGN.md section 6): token t, at
    position p = q_offset + t, picks min(p + 1, topk) distinct random keys
    of [0, p] (of [0, Skv) when skv is given and smaller) in random order;
    the other slots are -1. int32 [b, s, g, topk]."""
    skv = s if skv is None else skv
    out = torch.full((b, s, g, topk), -1, dtype=torch.int32, device=device)
    k = min(topk, skv)
    keys = torch.arange(skv, device=device)
    for b_ in range(b):
        for s0 in range(0, s, chunk):
            c = min(chunk, s - s0)
            r = torch.rand(c, g, skv, device=device, generator=generator)
            pos = torch.arange(q_offset + s0, q_offset + s0 + c, device=device).view(c, 1, 1)
            r = r.masked_fill(keys > pos, 2.0)
            val, idx = r.topk(k, dim=-1, largest=False)
            out[b_, s0:s0 + c, :, :k] = torch.where(val < 2.0, idx, -1).int()
    return out


def token_tile_union(indices, seq_len, kv_len, tile_tokens, is_causal=True, topk_length=None,
                     q_offset=0):
    """What the union builder (kernels/sparse_mla_union.mlir) computes, per
    (tile, group) of flattened tokens [B * S, G, topk]: the tile's keys that
    are valid for at least one of its tokens, increasing, with the bits of
    the tokens that picked them, then one entry per repeat (a key picked
    again by the same token) with that token's bit, in the order of the
    tokens and of their slots. topk_length [B * S, G or 1] keeps the first
    slots of each row; token s is at position q_offset + s. Returns a list,
    row tile * G + g, of (union [(key, bits)], repeats [(key, bit)])."""
    tokens, g, topk = indices.shape
    b = tokens // seq_len
    tiles_per_row = -(-seq_len // tile_tokens)
    rows = []
    idx = indices.cpu().tolist()
    lens = None if topk_length is None else topk_length.cpu().reshape(tokens, -1).tolist()
    for tile in range(b * tiles_per_row):
        s0 = (tile % tiles_per_row) * tile_tokens
        t0 = (tile // tiles_per_row) * seq_len + s0
        for gi in range(g):
            bits, repeats = {}, []
            for t in range(min(tile_tokens, seq_len - s0)):
                seen = set()
                n = topk if lens is None else min(max(lens[t0 + t][min(gi, len(lens[0]) - 1)], 0),
                                                  topk)
                for key in idx[t0 + t][gi][:n]:
                    if not (0 <= key < kv_len and (not is_causal or key <= q_offset + s0 + t)):
                        continue
                    if key in seen:
                        repeats.append((key, 1 << t))
                    seen.add(key)
                    bits[key] = bits.get(key, 0) | (1 << t)
            rows.append((sorted(bits.items()), repeats))
    return rows
