"""The benchmark's index patterns, table and plot (no GPU)."""
import json

import pytest
import torch

from sparse_mla import bench


def test_correlated_pattern_shares_most_keys_of_the_previous_token():
    s, topk = 300, 64
    idx = bench.correlated_indices(s, topk, torch.Generator().manual_seed(0), device="cpu")
    for t in range(s):
        row = idx[t][idx[t] >= 0].tolist()
        assert len(row) == min(t + 1, topk) == len(set(row))
        assert all(0 <= k <= t for k in row)
        if t > topk:
            prev = set(idx[t - 1].tolist())
            assert len(prev & set(row)) >= 0.75 * topk


def run(rows):
    return dict(date="2026-12-03", version="0.2.0+gabc", device="H200", topk=2048,
                command="python3 -m sparse_mla.bench", rows=rows)


def row(peer, s, h, ms, pattern="random", **kw):
    return dict(kind="time", peer=peer, S=s, H=h, topk=2048, pattern=pattern, ms=ms,
                ms_min=ms, tflops=bench.flops(s, h, 2048) / ms / 1e9, **kw)


def test_table_gives_ratios_within_the_run():
    md = bench.table(run([row("sparse_mla", 4096, 16, 2.0, tile_tokens=4),
                          row("sparse_mla_t1", 4096, 16, 8.0, tile_tokens=1),
                          row("cudnn_fe_sm90", 4096, 16, 6.0),
                          row("sparse_mla_det", 4096, 16, 2.5, tile_tokens=4),
                          row("sparse_mla", 4096, 64, 9.0, "correlated", tile_tokens=1),
                          dict(kind="time", peer="cudnn_fe_sm90", S=4096, H=64,
                               pattern="correlated", error="RuntimeError()")]))
    # Rows without Skv are earlier runs' (S = Skv).
    assert ("| 4096 | 4096 | 16 | 4 | - | 2.00 | 369 | 8.00 | 6.00 | 3.00 | 4.00 | 2.50 | +25% "
            "| 2.40 |") in md
    assert "## The backward, pattern `correlated`" in md
    assert "| 4096 | 4096 | 64 | 1 | - | 9.00 | 328 | - | - | - | - |" in md


def test_tail_shapes_carry_their_keys_and_key_ranges():
    assert bench.parse_shape("4096x16") == (4096, 4096, 16)
    assert bench.parse_shape("4096:131072x64") == (4096, 131072, 64)
    for bad in ("8192:4096x16", "0x16", "4096:x16"):
        with pytest.raises(ValueError):
            bench.parse_shape(bad)
    tail = dict(row("sparse_mla", 4096, 64, 14.0, tile_tokens=1), Skv=131072, range_keys=4096)
    md = bench.table(run([tail, dict(row("cudnn_fe_sm90", 4096, 64, 21.0), Skv=131072)]))
    assert "| 4096 | 131072 | 64 | 1 | 4096 | 14.00 |" in md and "| 1.50 |" in md


def test_render_writes_json_table_and_plot(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run([row("sparse_mla", s, 16, 0.1 * s / 1024, tile_tokens=4)
                                    for s in (2048, 4096)])))
    assert bench.main(["--render", str(path), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "bench.md").read_text().count("| 16 | 4 | - |") == 2
    pytest.importorskip("matplotlib")
    assert (tmp_path / "out" / "bench.png").read_bytes()[:4] == b"\x89PNG"


def test_flops_and_table_follow_the_rope_tail():
    assert bench.flops(4096, 64, 2048, d_tail=0) < bench.flops(4096, 64, 2048)
    assert "D_tail 0;" in bench.table(dict(run([row("sparse_mla", 4096, 64, 9.0)]), d_tail=0))
    assert "D_tail 64;" in bench.table(run([row("sparse_mla", 4096, 64, 9.0)]))


def test_forward_and_training_step_rows_get_their_own_tables_and_flops():
    assert bench.flops(4096, 64, 2048, pass_="fwd") == 2 * 4096 * 64 * 2048 * (576 + 512)
    assert bench.flops(4096, 64, 2048, pass_="step") == (bench.flops(4096, 64, 2048)
                                                          + bench.flops(4096, 64, 2048,
                                                                        pass_="fwd"))
    fwd = dict(row("sparse_mla", 4096, 16, 0.5, tile_tokens=4), tflops=300.0, **{"pass": "fwd"})
    t1 = dict(row("sparse_mla_t1", 4096, 16, 1.5, tile_tokens=1), **{"pass": "fwd"})
    flash = dict(row("flashmla_sm90", 4096, 16, 1.0), **{"pass": "fwd"})
    md = bench.table(run([row("sparse_mla", 4096, 16, 2.0, tile_tokens=4), fwd, t1, flash]))
    assert "## The backward, pattern `random`" in md
    assert "## The forward, pattern `random`" in md
    assert "| x per token | flashmla_sm90 ms | x flashmla_sm90 |" in md
    assert "| 4096 | 4096 | 16 | 4 | 0.50 | 300 | 1.50 | 3.00 | 1.00 | 2.00 |" in md
    assert "training step" not in md


def test_the_forward_times_the_kl_target_and_the_step_pairs_flashmla_with_cudnn(monkeypatch):
    # The forward's peers include our forward with the indexer's target
    # (its "x" in the table is that target's cost).
    assert "with_kl_target" in bench.peers(False, pass_="fwd")
    md = bench.table(run([dict(row("sparse_mla", 4096, 64, 3.0, tile_tokens=1), **{"pass": "fwd"}),
                          dict(row("with_kl_target", 4096, 64, 4.5), **{"pass": "fwd"})]))
    assert "| with_kl_target ms | x with_kl_target |" in md and "| 4.50 | 1.50 |" in md
    # The training step: FlashMLA's forward, then cuDNN's backward on its o
    # and lse, where both are there (stand-ins here, called in that order).
    calls = []
    backward = bench.peers

    def peers(with_reference, deterministic=False, pass_="bwd"):
        found = backward(with_reference, deterministic, pass_)
        if pass_ == "bwd":
            found["cudnn_fe_sm90"] = lambda q, kv, o, do, idx, lse: calls.append(("bwd", o, lse))
        return found

    def flashmla(library):
        assert library == "lib.so"
        return lambda q, kv, o, do, idx, lse: (calls.append("fwd") or (q * 2, lse * 3))

    monkeypatch.setattr(bench, "peers", peers)
    monkeypatch.setattr(bench, "flashmla", flashmla)
    monkeypatch.setenv("SPARSE_MLA_FLASHMLA_LIB", "lib.so")
    step = bench.peers(False, pass_="step")
    assert set(step) == {"sparse_mla", "flashmla_cudnn"}
    q, lse = torch.ones(2, 3), torch.ones(2)
    step["flashmla_cudnn"](q, None, None, None, None, lse)
    assert calls[0] == "fwd" and calls[1][0] == "bwd"
    assert torch.equal(calls[1][1], q * 2) and torch.equal(calls[1][2], lse * 3)
