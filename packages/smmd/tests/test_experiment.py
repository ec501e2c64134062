"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json

import pytest
from icml26_smmd.experiment import CLAIMS, CONFIGS, EXPERIMENT, OBJECTIVES, TASKS, Config


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
    medium = Config(seeds=tuple(range(6, 12)), workers=3, llm_seeds=(0, 1, 2), llm_epochs=2)
    assert CONFIGS["medium"] == medium  # quick's pipeline on new seeds, and SmolLM2
    assert (quick.clock_train, quick.clock_epochs, quick.llm_seeds) == (400, 40, ())


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
