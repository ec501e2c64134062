"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_adaeraser.experiment import CLAIMS, CONFIGS, EXPERIMENT, METHODS, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "adaeraser" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["adaptive_strength.png", "examples.png"]
    for method in (*METHODS, "biharmonic"):
        assert len(data["metrics"][f"psnr_in_{method}"]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert all(0 <= p <= 1 for p in data["metrics"]["paired_p_psnr_adaptive_vs_hard"]["per_seed"])
    assert all(0 <= v <= 1 for v in data["metrics"]["adaptive_strength_last_step"]["per_seed"])
    assert len(data["metrics"]["psnr_in_adaptive_minus_hard_w1"]["per_seed"]) == 2


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3 and CONFIGS["quick"].scenes >= 20
    assert EXPERIMENT.config("quick") is CONFIGS["quick"]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"patch": 3}, "patch"),
        ({"scenes": 1}, "scenes"),
        ({"strength": 0.0}, "strength"),
        ({"strength": 0.01}, "strength"),
        ({"guidance": 0.0}, "guidance"),
        ({"fixed_strength": 1.1}, "fixed_strength"),
        ({"lambda_max": -0.1}, "lambda_max"),
        ({"ss_scale": 0.0}, "ss_scale"),
        ({"object_rate": 2.0}, "object_rate"),
        ({"train_steps": 0}, "train_steps"),
        ({"seeds": ()}, "seeds"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_medium_config_trains_a_wider_denoiser_longer():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert medium.dim > quick.dim and medium.train_steps == 4 * quick.train_steps
    assert medium == Config(seeds=quick.seeds, dim=medium.dim, train_steps=medium.train_steps)
