"""The smoke run end to end, the results.json schema, and the config's bad inputs."""

import json

import pytest
from icml26_v2v_ccm.experiment import CLAIMS, CONFIGS, EXPERIMENT, METHODS, Config


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "v2v-ccm" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["v2v_ccm_accuracy.png"]
    metrics = data["metrics"]
    for m in METHODS:
        assert len(metrics[f"acc_{m}_0.25_occluded"]["per_seed"]) == len(CONFIGS["smoke"].seeds)
        assert metrics[f"tokens_{m}_0.25"]["mean"] == 16 + 2 * 4  # ego's 16 + 4 from each CAV
    assert metrics["tokens_dense"]["mean"] == 48 and metrics["tokens_ego"]["mean"] == 16
    b = [metrics[f"bytes_ccm_{r}"]["mean"] for r in (0.125, 0.25, 0.5)]
    assert b[0] < b[1] < b[2] < metrics["bytes_dense"]["mean"]
    again = EXPERIMENT.run("smoke", tmp_path)  # the trained models now come from the cache: same numbers
    assert again.metrics == record.metrics


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)


def test_medium_config_is_quick_in_the_specs_world_with_a_larger_training_budget():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert medium.grid == 2 * quick.grid == 32 and medium.lidar_range > quick.lidar_range
    assert medium.train_scenes == 4 * quick.train_scenes and medium.steps == 4 * quick.steps
    assert (medium.seeds, medium.d, medium.layers, medium.keep_ratios) == (
        quick.seeds,
        quick.d,
        quick.layers,
        quick.keep_ratios,
    )


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"patch": 3}, "patch"),
        ({"n_agents": 1}, "n_agents"),
        ({"keep_ratios": (0.25, 0.5, 1.5)}, "keep_ratios"),
        ({"keep_ratios": (0.125,)}, "keep_ratios"),
        ({"fastv_layer": 2}, "fastv_layer"),
        ({"lidar_range": 0.0}, "lidar_range"),
        ({"d": 30}, "d"),
        ({"heads": 3}, "heads"),
        ({"steps": 0}, "steps"),
        ({"lr": -1.0}, "lr"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
