"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from icml26_smmd.experiment import CLAIMS, CONFIGS, EXPERIMENT, OBJECTIVES, SINGLE_TERMS, TASKS, Config, measure_seed


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "smmd" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert json.dumps(record.claims) == json.dumps(data["claims"])  # NaN (the SmolLM2 claims, not run) == NaN
    assert data["figures"] == ["mae_accuracy.png"]
    for task in TASKS:
        for name in OBJECTIVES:
            accs = data["metrics"][f"{task}_{name}_acc"]["per_seed"]
            assert len(accs) == len(CONFIGS["smoke"].seeds) and all(0 <= a <= 1 for a in accs)
            assert all(m >= 0 for m in data["metrics"][f"{task}_{name}_mae"]["per_seed"])


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["quick"].dtype == CONFIGS["paper"].dtype == "float64"
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)
    quick = CONFIGS["quick"]
    medium = Config(seeds=tuple(range(6, 12)), workers=3, llm_seeds=(0, 1, 2), llm_blocks=6, llm_lr=1e-3, llm_epochs=6)
    assert CONFIGS["medium"] == medium  # quick's pipeline on new seeds, with every arm, and SmolLM2 (0.1.7 budget)
    assert (quick.clock_train, quick.clock_epochs, quick.llm_seeds) == (400, 40, ())
    assert not quick.single_terms and medium.single_terms  # quick leaves the single-term arms to medium (0.1.5)
    assert quick.objectives == ("CE", "NTL-WAS", "SMMD", "shuffled") and medium.objectives == OBJECTIVES


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"clock_train": 0}, "clock_train"),
        ({"clock_epochs": 0}, "clock_epochs"),
        ({"addition_train": 10_000}, "addition_train"),
        ({"addition_test": 9500}, "addition_test"),
        ({"lam": 0.0}, "lam"),
        ({"ntl_lam": -1.0}, "ntl_lam"),
        ({"lr": 0.0}, "lr"),
        ({"clock_noise": 2.0}, "clock_noise"),
        ({"workers": 0}, "workers"),
        ({"dtype": "float16"}, "dtype"),
        ({"single_terms": 0}, "single_terms"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_claim_metrics_are_the_paired_differences_of_one_seed():
    from icml26_smmd.experiment import claim_metrics

    mae = {"CE": 4.0, "NTL-WAS": 3.0, "SMMD": 3.0, "MMD": 3.5, "smooth": 5.0, "shuffled": 4.0}
    acc = {"CE": 0.5, "NTL-WAS": 0.4, "SMMD": 0.6, "MMD": 0.6, "smooth": 0.5, "shuffled": 0.5}
    out = {f"x_{t}_{o}_mae": mae[o] * (1 if t == "clock" else 2) for t in TASKS for o in OBJECTIVES}
    out |= {f"x_{t}_{o}_acc": acc[o] for t in TASKS for o in OBJECTIVES}
    m = claim_metrics(out, "x_")
    assert m["x_clock_mae_gain_vs_CE"] == 1.0 and m["x_addition_mae_gain_vs_CE"] == 2.0
    assert m["x_clock_acc_gain_vs_CE"] == pytest.approx(0.1)
    assert m["x_shuffled_minus_smmd_rel_mae"] == pytest.approx(0.25)  # (4 - 3) / 4 on both tasks
    assert m["x_best_single_term_minus_smmd_rel_mae"] == pytest.approx(0.125)  # (3.5 - 3) / 4
    assert m["x_acc_gain_vs_NTL"] == pytest.approx(0.2)
    assert set(m) == {f"x_{c.metric}" for c in CLAIMS}


def test_without_the_single_term_arms_their_claim_is_not_measured():
    from icml26_smmd.experiment import claim_metrics

    out = {f"{t}_{o}_{m}": 1.0 + len(o) + (m == "mae") for t in TASKS for o in OBJECTIVES for m in ("acc", "mae")}
    full = claim_metrics(out)
    partial = claim_metrics({k: v for k, v in out.items() if not any(f"_{o}_" in k for o in SINGLE_TERMS)})
    assert math.isnan(partial.pop("best_single_term_minus_smmd_rel_mae"))
    assert partial == {k: v for k, v in full.items() if k != "best_single_term_minus_smmd_rel_mae"}


def test_quick_leaves_the_single_term_arms_and_the_rest_does_not_move():
    """0.1.5: without the MMD-only and smoothness-only arms every other number of a seed is the same to the bit
    (each arm starts from the same weights and batch order, and draws nothing the others read)."""
    smoke = replace(CONFIGS["smoke"], seeds=(0,))
    full = measure_seed(smoke, 0)
    without = measure_seed(replace(smoke, single_terms=False), 0)
    assert math.isnan(without.pop("best_single_term_minus_smmd_rel_mae"))
    dropped = {f"{t}_{o}_{m}" for t in TASKS for o in SINGLE_TERMS for m in ("acc", "mae")}
    assert set(without) == set(full) - dropped - {"best_single_term_minus_smmd_rel_mae"}
    assert without == {k: full[k] for k in without}


def test_seeds_run_in_threads_of_this_process_with_the_numbers_of_each_seed_alone(tmp_path, monkeypatch):
    """0.1.5 runs the toy seeds in threads (0.1.4 spawned worker processes, each paying its imports): no process
    is spawned, and each seed's numbers are those of the seed run alone (the weights are drawn from torch's global
    generator under a lock)."""
    import icml26_shared.seeding

    def no_process(*args, **kwargs):
        raise AssertionError("a worker process was spawned")

    monkeypatch.setattr(icml26_shared.seeding, "ProcessPoolExecutor", no_process)
    config = replace(CONFIGS["smoke"], workers=2)
    threaded = EXPERIMENT.measure(config, tmp_path)
    for i, seed in enumerate(config.seeds):
        alone = measure_seed(config, seed)
        np.testing.assert_equal({k: v[i] for k, v in threaded.items() if k in alone}, alone)
