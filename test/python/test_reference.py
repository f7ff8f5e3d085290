"""The references themselves, on small hand-worked cases (no GPU)."""
import torch

from sparse_mla.reference import token_tile_union


def test_token_tile_union_by_hand():
    # 2 batch rows of 3 tokens, tiles of 2: tiles (0, 1), (2,), (3, 4), (5,).
    idx = torch.tensor([[[0, 5, -1]], [[1, 0, 0]], [[2, 9, 3]],
                        [[4, 4, 4]], [[0, 1, 2]], [[1, 1, 7]]], dtype=torch.int32)
    rows = token_tile_union(idx, seq_len=3, kv_len=6, tile_tokens=2, is_causal=True)
    assert rows == [
        ([(0, 0b11), (1, 0b10)], [(0, 0b10)]),  # 5 is in token 0's future; token 1 repeats 0
        ([(2, 0b01)], []),                      # 9 >= Skv, 3 in the future
        ([(0, 0b10), (1, 0b10)], []),           # 4 is in the future of both
        ([(1, 0b01)], [(1, 0b01)]),             # 7 >= Skv
    ]
    rows = token_tile_union(idx, seq_len=3, kv_len=6, tile_tokens=2, is_causal=False)
    assert rows[0] == ([(0, 0b11), (1, 0b10), (5, 0b01)], [(0, 0b10)])
    assert rows[2] == ([(0, 0b10), (1, 0b10), (2, 0b10), (4, 0b01)], [(4, 0b01), (4, 0b01)])


def test_forward_reference_matches_the_dense_attention():
    # Two kv groups, invalid and repeated keys, a row with none, a sink; natural
    # and base-2 lse; empty rows give o = 0 and lse = +inf.
    from dense import dense_attention
    from sparse_mla.reference import LN2, sparse_mla_fwd_reference
    gen = torch.Generator().manual_seed(0)
    s, h, g, skv, topk = 12, 4, 2, 20, 6
    q = torch.randn(1, s, h, 576, generator=gen).bfloat16()
    kv = torch.randn(1, skv, g, 576, generator=gen).bfloat16()
    idx = torch.randint(-2, skv + 2, (1, s, g, topk), generator=gen, dtype=torch.int32)
    idx[0, 4, :, 1:3] = idx[0, 4, :, :1]
    idx[0, 7] = -1
    sink = torch.linspace(-1, 1, h)
    o, lse = sparse_mla_fwd_reference(q, kv, idx, attn_sink=sink, lse_base2=False)
    want = dense_attention(q.double(), kv.double(), idx, 576 ** -0.5, True, sink.double())
    assert torch.allclose(o.double(), want, atol=2e-2, rtol=2e-2)
    assert (o[0, 7] == 0).all() and torch.isinf(lse[0, 7]).all() and (lse[0, 7] > 0).all()
    _, lse2 = sparse_mla_fwd_reference(q, kv, idx, attn_sink=sink)
    finite = torch.isfinite(lse)
    assert torch.allclose(lse2[finite] * LN2, lse[finite], rtol=1e-6, atol=1e-6)
