"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_fuse.experiment import CLAIMS, CONFIGS, EXPERIMENT, FILTERS, PROTECTIONS, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "fuse" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["fuse_accuracy_spectrum.png"]
    n = len(CONFIGS["smoke"].seeds)
    for name in ("em", "fuse"):
        for filter_name in FILTERS:
            values = data["metrics"][f"{name}_{filter_name}_acc"]["per_seed"]
            assert len(values) == n and all(0 <= v <= 1 for v in values)
    for name in PROTECTIONS:
        assert all(0 <= v <= 1 for v in data["metrics"][f"{name}_low_band_share"]["per_seed"])
    em = data["metrics"]
    assert em["em_low_pass_gain"]["mean"] == pytest.approx(em["em_low_pass_acc"]["mean"] - em["em_none_acc"]["mean"])


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert {c.metric for c in CLAIMS} == {
        "worst_unfiltered_protected_acc",
        "em_low_pass_gain",
        "low_pass_em_minus_fuse",
        "low_band_share_fuse_minus_em",
    }


def test_medium_config_doubles_quick_training_with_30_seeds():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert len(medium.seeds) == 30 and medium.n_train == quick.n_train
    doubled = ("victim_epochs", "em_rounds", "fuse_rounds", "generator_steps")
    assert all(getattr(medium, k) == 2 * getattr(quick, k) for k in doubled)
    kept = ("eps", "lr", "batch_size", "em_pgd_steps", "low_pass_cutoff", "generator_em_filters")
    assert all(getattr(medium, k) == getattr(quick, k) for k in kept)


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_train": 1790}, "n_train"),
        ({"eps": 0.0}, "eps"),
        ({"victim_epochs": 0}, "victim_epochs"),
        ({"lr": -1.0}, "lr"),
        ({"blur_sigma": 0.0}, "blur_sigma"),
        ({"jpeg_quality": 100}, "jpeg_quality"),
        ({"low_pass_cutoff": 1.5}, "low_pass_cutoff"),
        ({"cbg_cutoff": -0.1}, "cbg_cutoff"),
        ({"cbg_weight": -1.0}, "cbg_weight"),
        ({"generator_em_filters": ("median",)}, "generator_em_filters"),
        ({"workers": 0}, "workers"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
