import json

import pytest
from icml26_sateen.experiment import CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "sateen" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert (tmp_path / "sateen_tta.png").is_file()
    m = data["metrics"]
    for method in ("no_adapt", "tent", "eata", "sar", "deyo", "sateen"):
        assert all(0.0 <= v <= 1.0 for v in m[f"{method}_suite"]["per_seed"])
    diff = [a - b for a, b in zip(m["sateen_suite"]["per_seed"], m["no_adapt_suite"]["per_seed"], strict=True)]
    assert diff == pytest.approx(m["sateen_minus_no_adapt_suite"]["per_seed"])


def test_rejects_unknown_corruption_in_config():
    with pytest.raises(ValueError, match="corruptions="):
        Config(corruptions=("fog",))


def test_rejects_zero_rounds_in_config():
    with pytest.raises(ValueError, match="rounds="):
        Config(rounds=0)


def test_fashion_path_of_the_paper_config_runs_on_a_tiny_slice():
    from icml26_sateen.experiment import measure_seed

    config = Config(
        seeds=(0,), dataset="fashion", n_train=128, n_test=64, epochs=1, width=4, rounds=1, corruptions=("pixelate",)
    )
    out = measure_seed(config, 0)
    assert all(0.0 <= out[f"{m}_suite"] <= 1.0 for m in ("no_adapt", "sateen", "deyo"))


def test_medium_config_lengthens_the_domains_and_adds_seeds():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.dataset == "fashion" and medium.n_test // medium.batch_size > 897 // quick.batch_size
    assert len(medium.seeds) == 14 > len(quick.seeds) and medium.workers == 2
    same = ("corruptions", "severity", "width", "lr", "lambda_1", "lambda_2", "k", "warmup", "rounds", "batch_size")
    assert all(getattr(medium, name) == getattr(quick, name) for name in same)
