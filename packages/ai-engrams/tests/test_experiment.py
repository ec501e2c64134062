"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_ai_engrams.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "ai-engrams" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert [(c["id"], c["verdict"]) for c in record.claims] == [(c["id"], c["verdict"]) for c in data["claims"]]
    llm = {c["id"]: c for c in data["claims"] if c["metric"].startswith("llm_")}
    assert len(llm) == 6 and all(c["verdict"] == "inconclusive" for c in llm.values())  # smoke runs no LLM
    assert data["figures"] == ["engram_erasure.png"]
    for metric in ("digits_retain_drop", "fashion_random_retain_drop", "lm_forget_nll_increase"):
        assert len(data["metrics"][metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert max(data["metrics"]["union_relative_error"]["per_seed"]) < 1e-8  # exact by linearity


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"hidden": ()}, "hidden"),
        ({"digits_epochs": 0}, "digits_epochs"),
        ({"fashion_train": 70000}, "fashion_train"),
        ({"lm_forget": 50}, "lm_forget"),
        ({"lm_people": 1}, "lm_people"),
        ({"alpha": 0.0}, "alpha"),
        ({"ga_lr": -1.0}, "ga_lr"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
