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
