"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json
import math

import pytest
from icml26_squant.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config, method_config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "squant" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    # NaN-aware: without the real-weights extra the MiniLM metrics are NaN, and NaN != NaN
    assert json.dumps(record.claims, sort_keys=True) == json.dumps(data["claims"], sort_keys=True)
    assert data["figures"] == ["errors.png"]
    for metric in ("float_acc", "squant4_err", "rtn3_bits", "search_over_fixed_error"):
        assert len(data["metrics"][metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert data["metrics"]["squant4_bits"]["mean"] == pytest.approx(4.0, abs=0.01)


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["paper"].K == 16
    # the real-LLM subsets fixed before the first run: the middle decoder layer of each model
    assert CONFIGS["quick"].smollm2_layers == (15,) and CONFIGS["quick"].gemma3_layers == ()
    assert CONFIGS["quick"].llm_linears == ("q_proj", "k_proj", "v_proj", "o_proj")
    assert CONFIGS["medium"].gemma3_layers == (9,) and len(CONFIGS["medium"].llm_linears) == 7
    assert CONFIGS["smoke"].smollm2_layers == ()  # the smoke run stays miniature


@pytest.mark.parametrize("K", [12, 16])
@pytest.mark.parametrize("bits", [3, 4])
@pytest.mark.parametrize("method", ["squant", "seedlm"])
def test_method_configs_hit_the_bit_budget_exactly(method, bits, K):
    assert method_config(method, bits, K, None).bits_per_weight == bits


def test_claim_metrics_are_measured():
    metrics = {c.metric for c in CLAIMS}
    assert "search_over_fixed_error" in metrics and "smollm2_squant4_log_ppl_over_float" in metrics


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"K": 1}, "K"),
        ({"k_sweep": (8, 40)}, "k_sweep"),
        ({"k_sweep": (10, 8)}, "k_sweep"),
        ({"shortlist": 0}, "shortlist"),
        ({"crop": 30}, "crop"),
        ({"hidden": 2}, "hidden"),
        ({"epochs": 0}, "epochs"),
        ({"n_test": 0}, "n_test"),
        ({"minilm_rows": 2}, "minilm_rows"),
        ({"workers": 0}, "workers"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}"):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")


def test_seed_without_real_weights_gives_nan_real_metrics(monkeypatch):
    import icml26_squant.data as data
    from icml26_squant.experiment import measure_seed

    monkeypatch.setattr(data, "minilm_available", lambda: False)
    out = measure_seed(CONFIGS["smoke"], 0)
    assert math.isnan(out["squant4_minilm_err"]) and math.isnan(out["squant_vs_rtn_minilm_log_ratio_3bit"])
    assert out["search_over_fixed_error"] < 1 and math.isfinite(out["float_acc"])
