"""The smoke run end to end, the results.json schema, and the config's bad inputs."""

import json

import pytest
from icml26_think_touch.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "think-touch" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert json.dumps(record.claims) == json.dumps(data["claims"])  # (NaN != NaN: compared as text)
    llm = [c for c in data["claims"] if c["id"].startswith("llm_")]
    assert len(llm) == 5 and all(c["verdict"] == "inconclusive" for c in llm)  # no SmolLM2 runs in smoke
    assert data["figures"] == ["think_touch.png"]
    metrics = data["metrics"]
    for name in ("full_loss", "bandit_loss", "lora_accuracy", "bandit_state_bytes_ratio"):
        assert len(metrics[name]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert all(0 < r < 1 for r in metrics["bandit_state_bytes_ratio"]["per_seed"])
    assert metrics["lora_state_bytes"]["mean"] < metrics["full_state_bytes"]["mean"]


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"} and len(CONFIGS["quick"].seeds) >= 3
    assert not CONFIGS["quick"].llm_seeds and CONFIGS["medium"].llm_seeds
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)
    assert CONFIGS["quick"].G == 10 and CONFIGS["quick"].k == 2


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"k": 0}, "k"),
        ({"k": 10}, "k"),
        ({"dataset": "cifar"}, "dataset"),
        ({"switch_every": 0}, "switch_every"),
        ({"gamma": 0.0}, "gamma"),
        ({"lr": -1.0}, "lr"),
        ({"lora_rank": 0}, "lora_rank"),
        ({"lora_lr_scale": 0.0}, "lora_lr_scale"),
        ({"quad_condition": 0.5}, "quad_condition"),
        ({"steps": 0}, "steps"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
