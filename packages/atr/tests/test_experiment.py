"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from icml26_atr import METHODS, experiment, training
from icml26_atr.experiment import (
    CLAIMS,
    CONFIGS,
    EXPERIMENT,
    TWO_VIEW_METHODS,
    Config,
    make_model,
    measure,
    measure_seed,
    pretrained_backbone,
)


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "atr" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert [(c["id"], c["verdict"]) for c in record.claims] == [(c["id"], c["verdict"]) for c in data["claims"]]
    assert data["figures"] == ["atr_long_tail.png"]
    metrics = data["metrics"]
    for method in ("ce", "focal", "logit_adjustment", "atr_bal", "atr_vtm", "atr"):
        assert all(0 <= v <= 1 for v in metrics[f"{method}_acc"]["per_seed"])
        assert len(metrics[f"{method}_few"]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert not any("_curve_" in name for name in metrics)


def test_configs():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert CONFIGS["medium"].backbone_per_seed and len(CONFIGS["medium"].seeds) == 24
    quick = CONFIGS["quick"]
    assert len(quick.seeds) >= 3 and quick.dataset == "fashion" and quick.imbalance_ratio == 100.0
    assert quick.early_epoch == 3 and CONFIGS["smoke"].early_epoch == 1


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"dataset": "cifar"}, "dataset"),
        ({"imbalance_ratio": 0.5}, "imbalance_ratio"),
        ({"n_max": 0}, "n_max"),
        ({"many_shot": 5}, "many_shot"),
        ({"eval_every": 50}, "eval_every"),
        ({"lr": 0.0}, "lr"),
        ({"focal_gamma": -1.0}, "focal_gamma"),
        ({"device": "tpu"}, "device"),
        ({"atr": {"quantile": 0.3}}, "atr"),
        ({"workers": 0}, "workers"),
        ({"dtype": "float16"}, "dtype"),
        ({"backbone_per_seed": 1}, "backbone_per_seed"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_quick_trains_in_float64_and_paper_in_float32():
    assert CONFIGS["quick"].dtype == CONFIGS["smoke"].dtype == "float64" and CONFIGS["paper"].dtype == "float32"
    assert {p.dtype for p in make_model(CONFIGS["smoke"], 30).parameters()} == {torch.float64}


def test_backbone_is_pretrained_on_one_thread_whatever_the_caller_uses(tmp_path, monkeypatch):
    """The cached backbone was pre-trained on the main process's threads (2 on the quick machines) while the
    seeds ran on one: a result that depended on the machine's thread count (issue 27)."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    threads = []

    def spy(*args, **kwargs):
        threads.append(torch.get_num_threads())
        return pretrain(*args, **kwargs)

    pretrain = training.pretrain
    monkeypatch.setattr(training, "pretrain", spy)
    torch.set_num_threads(2)
    try:
        state = pretrained_backbone(CONFIGS["smoke"])
        assert threads == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)
    assert {v.dtype for v in state.values()} == {torch.float64}


def test_backbone_per_seed_pretrains_with_the_seed(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    seeds = []

    def spy(model, images, vocab, steps, batch_size, lr, seed):
        seeds.append(seed)
        return pretrain(model, images, vocab, steps, batch_size, lr, seed)

    pretrain = training.pretrain
    monkeypatch.setattr(training, "pretrain", spy)
    measure_seed(replace(CONFIGS["smoke"], backbone_per_seed=True), 3)
    assert seeds == [3]


def test_forked_arms_give_the_numbers_of_one_process(tmp_path, monkeypatch):
    """workers=2 runs (seed, arm) units in forked processes; the metrics are those of ``measure_seed``, bit for bit."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    config = replace(CONFIGS["smoke"], epochs=1)
    forked, alone = (measure(replace(config, workers=w), tmp_path / str(w)) for w in (2, 1))
    assert list(forked) == list(alone)
    for name, values in alone.items():
        np.testing.assert_array_equal(forked[name], values, err_msg=name)  # nan (an undefined share) equals nan


def test_units_are_seed_arm_pairs_longest_arm_first_on_the_workers(tmp_path, monkeypatch):
    """Issue 28: one seed per spawned process left a core idle during the last seed and re-imported torch; the
    per-seed backbones of medium are pre-trained on the workers, before the arms (``run_units`` forks them)."""
    calls = []

    def recording_run_units(fn, config, units, workers):
        """``run_units``' stand-in: runs the units here and records what it was given."""
        calls.append((fn.__name__, [tuple(u) for u in units], workers))
        return [fn(config, *unit) for unit in units]

    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    monkeypatch.setattr(experiment, "run_units", recording_run_units)
    config = replace(CONFIGS["smoke"], workers=2, backbone_per_seed=True, epochs=1)
    measure(config, tmp_path)
    (pretrain, backbones, w1), (arm, units, w2) = calls
    assert (pretrain, arm, w1, w2) == ("_pretrain", "measure_arm", 2, 2)
    assert backbones == [(0,), (1,)]
    assert sorted(units) == sorted((s, m) for s in config.seeds for m in METHODS)
    n_first = len(TWO_VIEW_METHODS) * len(config.seeds)
    assert {m for _, m in units[:n_first]} == set(TWO_VIEW_METHODS)
