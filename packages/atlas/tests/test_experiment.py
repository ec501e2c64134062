"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_atlas.experiment import CLAIMS, CONFIGS, EXPERIMENT, MQAR_RULES, Config
from icml26_atlas.layers import RULES


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "atlas" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["atlas_claims.png"]
    metrics = data["metrics"]
    for claim in CLAIMS:
        assert len(metrics[claim.metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    # the smoke capacity: identity stores d_k pairs, degree-2 features far more
    assert metrics["capacity_identity"]["per_seed"] == [6.0, 6.0]
    assert min(metrics["capacity_poly2"]["per_seed"]) > 6 * 6 / 2
    assert metrics["chunked_max_abs_error"]["mean"] < 1e-9
    assert all(0 <= v <= 1 for v in metrics["mqar_atlas_acc"]["per_seed"])


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert MQAR_RULES == RULES


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"mqar_rules": ("deltanet",)}, "mqar_rules"),
        ({"windows": (1,)}, "windows"),
        ({"windows": ()}, "windows"),
        ({"etas": (0.0,)}, "etas"),
        ({"window": 0}, "window"),
        ({"degree": 0}, "degree"),
        ({"kernel_degree": 9}, "kernel_degree"),
        ({"mqar_pairs": 40}, "mqar_pairs"),
        ({"capacity_tolerance": 0.0}, "capacity_tolerance"),
        ({"lr": -1.0}, "lr"),
        ({"workers": 0}, "workers"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
