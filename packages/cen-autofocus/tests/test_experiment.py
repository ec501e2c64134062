"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import numpy as np
import pytest
from icml26_cen_autofocus.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config, discriminability


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "cen-autofocus" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["success_by_condition.png"]
    for metric in ("cen_success", "tenengrad_mae", "cen_drift_success", "two_peak_selection_minus_best_fixed"):
        assert len(data["metrics"][metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert all(0 <= v <= 1 for v in data["metrics"]["cen_success"]["per_seed"])


def test_configs():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3


def test_medium_config_is_quick_with_the_seeds_that_decide_the_selection_claim():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert len(medium.seeds) == 70 > len(quick.seeds) and medium.workers == 2
    assert medium == Config(seeds=medium.seeds, workers=quick.workers)  # nothing else changes


def test_discriminability():
    curve = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    assert discriminability(curve, 2.2) == 1.0 and discriminability(curve, 0.0) == 0.0
    assert discriminability(np.ones(5), 2.0) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"scenes": ()}, "scenes"),
        ({"scenes": ("lena",)}, "scenes"),
        ({"conditions": ("drift",)}, "conditions"),
        ({"block_lengths": ()}, "block_lengths"),
        ({"block_lengths": (0,)}, "block_lengths"),
        ({"size": 8}, "size"),
        ({"n_positions": 5}, "n_positions"),
        ({"drift_strength": 1.5}, "drift_strength"),
        ({"workers": 0}, "workers"),
        ({"seeds": ()}, "seeds"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="^config="):
        EXPERIMENT.run("huge")
