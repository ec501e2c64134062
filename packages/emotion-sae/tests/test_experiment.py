"""The smoke run end to end, the results.json schema, the operating-point rule, and the config's bad inputs."""

import json

import pytest
import torch
from icml26_emotion_sae.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config, _operating_point
from icml26_emotion_sae.pipeline import build_world


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "emotion-sae" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"] and data["figures"] == ["emotion_sae_claims.png"]
    metrics = data["metrics"]
    for claim in CLAIMS:
        assert len(metrics[claim.metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    for name in ("induction_target_prob", "induction_content", "random_abs_effect", "f0_sign_agreement"):
        assert all(0 <= v <= 1 for v in metrics[name]["per_seed"])
    assert all(v <= 1 for v in metrics["sae_explained_variance"]["per_seed"])
    # a second build reads the cached tokenizer, backbone and SAE
    first, second = (build_world(CONFIGS["smoke"], 0) for _ in range(2))
    torch.testing.assert_close(first.sae.W_dec, second.sae.W_dec)
    torch.testing.assert_close(first.tts.head.weight, second.tts.head.weight)
    assert len(list((tmp_path / "cache" / "cached" / "emotion-sae").glob("*.safetensors"))) == 3


def test_operating_point_rule():
    curve = [(1.0, 0.3, 0.99), (2.0, 0.7, 0.95), (4.0, 0.9, 0.6)]
    assert _operating_point(curve, 0.9) == 2.0  # the best probability that keeps the content
    assert _operating_point(curve, 0.999) == 1.0  # none keeps it: the gentlest strength


def test_configs():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3


def test_medium_config_is_a_larger_longer_trained_quick_with_six_seeds():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert len(medium.seeds) == 6 and medium.d_model > quick.d_model and medium.d_sae == 8 * medium.d_model
    assert medium.tts_steps == 3 * quick.tts_steps and medium.sae_steps == 3 * quick.sae_steps
    assert medium.m == CONFIGS["paper"].m == 16 and medium.n_val == 2 * quick.n_val
    kept = ("alphas", "content_floor", "k", "layer", "n_layers", "n_test", "selection_rule", "tts_lr", "sae_lr")
    assert all(getattr(medium, k) == getattr(quick, k) for k in kept)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"k": 0}, "k"),
        ({"k": 500}, "k"),
        ({"layer": 4}, "layer"),
        ({"m": 0}, "m"),
        ({"alphas": ()}, "alphas"),
        ({"alphas": (float("inf"),)}, "alphas"),
        ({"alphas": (-1.0,)}, "alphas"),
        ({"content_floor": 1.5}, "content_floor"),
        ({"selection_rule": "max"}, "selection_rule"),
        ({"n_tokens": 10}, "n_tokens"),
        ({"tts_lr": 0.0}, "tts_lr"),
        ({"workers": 0}, "workers"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
