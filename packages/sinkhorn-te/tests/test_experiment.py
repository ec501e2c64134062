"""The smoke run end to end, the results.json schema, the configs and the CLI's bad inputs."""

import json
from dataclasses import replace

import numpy as np
import pytest
from icml26_shared.cli import paper_main
from icml26_sinkhorn_te.experiment import CONFIGS, EXPERIMENT, Config, jackknife_abs_bias_gap


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "sinkhorn-te" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert set(data["figures"]) == {"rejection_rates.png", "estimator_errors.png"}
    n = len(CONFIGS["smoke"].seeds)
    assert all(m["n"] == n for m in data["metrics"].values())
    assert all(v in (0.0, 1.0) for v in data["metrics"]["reject_aggregated_theta0"]["per_seed"])


def test_replications_on_two_workers_give_the_numbers_of_one_process(tmp_path):
    config = replace(CONFIGS["smoke"], seeds=(0, 1, 2))
    forked, alone = (EXPERIMENT.measure(replace(config, workers=w), tmp_path) for w in (2, 1))
    assert forked == alone


def test_jackknife_pseudo_values_of_a_gap_of_same_sign_means_are_the_paired_differences():
    """When every error is positive, |mean| is linear and the pseudo-values are the paired differences."""
    rng = np.random.default_rng(0)
    plugin, onestep = rng.random(20) + 1, rng.random(20) + 1
    np.testing.assert_allclose(jackknife_abs_bias_gap(plugin, onestep), plugin - onestep)


def test_config_requires_the_claimed_thetas():
    with pytest.raises(ValueError, match="thetas="):
        Config(thetas=(0.5, 1.0))


def test_config_rejects_bad_alpha():
    with pytest.raises(ValueError, match="alpha="):
        Config(alpha=1.0)


@pytest.mark.parametrize(
    ("field", "value"),
    [("n", 5), ("eps_estimate", 0.0), ("n_folds", 1), ("n_truth", 3), ("seeds", (1, 1)), ("workers", 0)],
)
def test_config_rejects_bad_values(field, value):
    with pytest.raises(ValueError, match=f"{field}="):
        Config(**{field: value})


def test_config_rejects_bad_eps_factors():
    with pytest.raises(ValueError, match="eps_factors="):
        Config(eps_factors=(0.1, 0.0))


def test_unknown_config_is_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.config("huge")
    assert paper_main("sinkhorn-te", ["run", "--config", "huge", "--out", str(tmp_path)]) == 2
    assert "config='huge'" in capsys.readouterr().err


def test_medium_config_is_quick_with_the_replications_that_decide_debiasing():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(medium.seeds) == 4200 and medium.seeds[: len(quick.seeds)] == quick.seeds
    assert medium == replace(quick, seeds=medium.seeds)  # everything but the replications is quick's
