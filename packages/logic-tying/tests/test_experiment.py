"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_logic_tying.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "logic-tying" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert json.loads(json.dumps(record.claims)) == data["claims"] or any(
        c["measured"]["mean"] != c["measured"]["mean"] for c in data["claims"]
    )  # NaN (an inconclusive 0/0 ratio) never compares equal
    assert data["figures"] == ["accuracy_vs_area.png"]
    metrics = data["metrics"]
    assert metrics["netlist_mismatch"]["per_seed"] == [0.0, 0.0]
    for name in ("gn_fd", "gn", "magnitude", "taylor", "random"):
        cuts = metrics[f"digits_{name}_area_cut_at30"]["per_seed"]
        assert all(c >= 0.3 - 1e-9 for c in cuts), name  # every method reaches the area target
        assert all(0 <= a <= 1 for a in metrics[f"digits_{name}_acc_at30"]["per_seed"])


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert {c.metric for c in CLAIMS} == {
        "digits_two_stage_minus_best_saliency",
        "fashion_two_stage_minus_best_saliency",
        "digits_drop_at30",
        "two_stage_minus_best_saliency_luts",
        "refined_over_screened_distortion",
        "netlist_mismatch",
    }


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"widths": (100, 105)}, "widths"),
        ({"rho": -1.0}, "rho"),
        ({"reductions": (0.5,)}, "reductions"),
        ({"reductions": (0.3, 1.0)}, "reductions"),
        ({"fd_budget": 0.0}, "fd_budget"),
        ({"n_calibration": 0}, "n_calibration"),
        ({"fashion_train": 70000}, "fashion_train"),
        ({"lut_k": 1}, "lut_k"),
        ({"lut_reductions": ()}, "lut_reductions"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
