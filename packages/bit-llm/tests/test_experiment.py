"""The smoke run end to end, the results.json schema, the perturbations and the config's bad inputs."""

import json

import numpy as np
import pytest
from icml26_bit_llm.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config, perturbations


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "bit-llm" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert [c["verdict"] for c in record.claims] == [c["verdict"] for c in data["claims"]]  # (nan != nan)
    assert data["figures"] == ["bit_llm.png"]
    metrics = data["metrics"]
    for name in ("prior_cider_d", "prefix_cider_d", "stage2_cider_d", "original_cider_d", "shuffled_cider_d"):
        assert len(metrics[name]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert metrics["zeroed_distinct"]["per_seed"] == [1.0, 1.0]  # one constant input, one caption
    assert metrics["identity_cider_d"]["per_seed"] == metrics["original_cider_d"]["per_seed"]


def test_perturbations():
    rng = np.random.default_rng(0)
    fmri, coords = rng.standard_normal((4, 9)).astype(np.float32), rng.random((9, 3)).astype(np.float32)
    p = perturbations(fmri, coords, seed=0)
    assert not p["zeroed"][0].any() and np.array_equal(p["identity"][0], fmri)
    shuffled, kept = p["shuffled"]
    assert np.array_equal(kept, coords) and not np.array_equal(shuffled, fmri)
    np.testing.assert_array_equal(np.sort(shuffled, axis=1), np.sort(fmri, axis=1))  # values permuted per sample
    values, places = p["reordered"]
    assert {(*c, v) for c, v in zip(places.tolist(), values[0].tolist())} == {
        (*c, v) for c, v in zip(coords.tolist(), fmri[0].tolist())
    }


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "paper"} and len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["paper"].lm == "smollm2" and CONFIGS["paper"].interval == 1
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"lm": "gpt5"}, "lm"),
        ({"interval": 0}, "interval"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"n_subjects": 1}, "n_subjects"),
        ({"sft_lr": 0.0}, "sft_lr"),
        ({"noise": -1.0}, "noise"),
        ({"n_tokens": 0}, "n_tokens"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
