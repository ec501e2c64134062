"""The smoke run end to end, the results.json schema, and the config's bad inputs."""

import json

import pytest
from icml26_physicsformer.experiment import CLAIMS, CONFIGS, EXPERIMENT, MODELS, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "physicsformer" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["physicsformer_lead_mae.png"]
    for m in MODELS:
        assert len(data["metrics"][f"{m}_mae_TEMP_1_24h"]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert data["metrics"]["synthetic_relation_error"]["mean"] < 0.1


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"stations": ("Dongsi", "Tiantan")}, "stations"),
        ({"stations": ("Dongsi", "Tiantan", "Atlantis")}, "stations"),
        ({"test_start": "2014-01-01"}, "test_start"),
        ({"pred_len": 48}, "pred_len"),
        ({"max_gap": -1}, "max_gap"),
        ({"dataset": "era5"}, "dataset"),
        ({"label_len": 49}, "label_len"),
        ({"steps": 0}, "steps"),
        ({"lr": 0.0}, "lr"),
        ({"lambda_pw": -1.0}, "lambda_pw"),
        ({"lambda_E": 0.0}, "lambda_E"),
        ({"length_scale": -5.0}, "length_scale"),
        ({"workers": 0}, "workers"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")


def test_medium_config_is_quick_with_10x_the_training_steps():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert medium.steps == 10 * quick.steps
    assert (medium.seeds, medium.dataset, medium.d_model, medium.batch_size, medium.lambda_pw, medium.lambda_E) == (
        quick.seeds,
        quick.dataset,
        quick.d_model,
        quick.batch_size,
        quick.lambda_pw,
        quick.lambda_E,
    )
