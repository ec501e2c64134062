"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_ultralif.experiment import BASELINE_NEURONS, CLAIMS, CONFIGS, EXPERIMENT, ULTRA_NEURONS, Config
from icml26_ultralif.networks import NEURONS, ULTRA


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "ultralif" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["accuracy_t1.png"]
    for metric in ("fsdd_LIF_acc", "fashion_UltraLIF_rate", "sparsity_rate_cut", "eps_min_relative_move"):
        assert len(data["metrics"][metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert all(0 <= v <= 1 for v in data["metrics"]["digits_UltraPLIF_acc"]["per_seed"])


def test_medium_config_is_quick_at_the_papers_epochs():
    quick, medium, paper = CONFIGS["quick"], CONFIGS["medium"], CONFIGS["paper"]
    for name in ("digits_epochs", "fashion_epochs", "fsdd_epochs"):
        assert getattr(medium, name) == getattr(paper, name) > getattr(quick, name)
    assert (medium.seeds, medium.ultra, medium.baselines, medium.fashion_train, medium.fsdd_bands) == (
        quick.seeds,
        quick.ultra,
        quick.baselines,
        quick.fashion_train,
        quick.fsdd_bands,
    )


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert {c.metric for c in CLAIMS} <= {
        "digits_worst_ultra_minus_lif",
        "fashion_worst_ultra_minus_lif",
        "fsdd_worst_ultra_minus_lif",
        "depth_drop_lif_minus_drop_ultralif",
        "sparsity_slack",
        "eps_min_relative_move",
    }


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


def test_neuron_names_match_the_registry():
    assert ULTRA_NEURONS == ULTRA and set(ULTRA_NEURONS + BASELINE_NEURONS) == set(NEURONS)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"ultra": ("UltraDLIF",)}, "ultra"),
        ({"baselines": ("DSpike",)}, "baselines"),
        ({"T": 0}, "T"),
        ({"deep_layers": 1}, "deep_layers"),
        ({"fashion_train": 0}, "fashion_train"),
        ({"fsdd_per_speaker": 51}, "fsdd_per_speaker"),
        ({"lr": 0.0}, "lr"),
        ({"lam": 0.0}, "lam"),
        ({"workers": 0}, "workers"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
