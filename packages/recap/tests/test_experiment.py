"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json
from dataclasses import replace

import numpy as np
import pytest
from icml26_recap.experiment import (
    CAPTCHA_KINDS,
    CLAIMS,
    CONFIGS,
    EXPERIMENT,
    GENERAL_KINDS,
    MULTI_STEP_KINDS,
    Config,
    measure,
    measure_seed,
    weights_key,
)
from icml26_recap.tasks import CAPTCHA_TYPES, GENERAL_TASKS, MULTI_STEP_TYPES
from icml26_shared import records


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "recap" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"] and data["figures"] == ["recap_claims.png"]
    metrics = data["metrics"]
    for variant in ("base", "sft", "recap", "recap_no_general", "pipeline"):
        assert 0 <= metrics[f"{variant}_captcha_success"]["mean"] <= 1
        assert 0 <= metrics[f"{variant}_general_accuracy"]["mean"] <= 1
    assert metrics["recap_minus_sft"]["per_seed"][0] == pytest.approx(
        metrics["recap_captcha_success"]["per_seed"][0] - metrics["sft_captcha_success"]["per_seed"][0]
    )
    # a second run loads the trained weights from the cache and measures the same numbers
    again = EXPERIMENT.run("smoke", tmp_path / "again")
    assert again.metrics == record.metrics


def test_cached_weights_are_keyed_by_the_code_too(monkeypatch):
    """Another error category widens the reflection head: weights cached by older code must not load."""
    config = CONFIGS["smoke"]
    key = weights_key(config, 0, "base")
    assert key.startswith("recap/base-") and key not in {weights_key(config, 1, "base"), weights_key(config, 0, "sft")}
    monkeypatch.setattr(records, "source_hash", lambda module: "other code")
    assert weights_key(config, 0, "base") != key


def test_configs_and_the_task_lists_agree():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"} and len(CONFIGS["quick"].seeds) >= 3
    medium, quick = CONFIGS["medium"], CONFIGS["quick"]
    assert medium.pipeline and not quick.pipeline  # quick leaves the pipeline arm to medium (0.1.3)
    assert replace(medium, seeds=quick.seeds, workers=quick.workers, pipeline=False) == quick
    assert (CAPTCHA_KINDS, GENERAL_KINDS, MULTI_STEP_KINDS) == (CAPTCHA_TYPES, GENERAL_TASKS, MULTI_STEP_TYPES)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"size": 96}, "size"),
        ({"size": 32}, "size"),
        ({"t_max": 2}, "t_max"),
        ({"captcha_episodes": 0}, "captcha_episodes"),
        ({"mistake_rate": 0.0}, "mistake_rate"),
        ({"mixture": (0.0, 0.3, 1.0)}, "mixture"),
        ({"mixture": (1.0, -0.3, 1.0)}, "mixture"),
        ({"finetune_epochs": 0}, "finetune_epochs"),
        ({"lr": 0.0}, "lr"),
        ({"workers": 0}, "workers"),
        ({"dtype": "float16"}, "dtype"),
        ({"seeds": ()}, "seeds"),
        ({"pipeline": 1}, "pipeline"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_seeds_in_threads_measure_what_one_seed_at_a_time_does(tmp_path, monkeypatch):
    """Seeds run in threads of one process (0.1.1 spawned a process per seed): each seed's numbers are those of
    the seed alone, whatever the other threads do (no global generator, no shared mutable state)."""
    config = replace(CONFIGS["smoke"], seeds=(0, 1), workers=2)
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "threads"))
    threaded = measure(config, tmp_path)
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "alone"))
    alone = measure_seed(config, 1)  # trained again, alone, in this thread
    np.testing.assert_equal({k: v[1] for k, v in threaded.items()}, alone)  # nan == nan here


def test_without_the_pipeline_arm_its_claim_is_not_measured_and_nothing_else_moves(tmp_path, monkeypatch):
    """quick leaves the pipeline arm to medium (0.1.3): its claim is inconclusive (not measured), its metrics are
    absent, and every other metric is the same to the bit as with the arm."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    with_arm = measure_seed(CONFIGS["smoke"], 0)
    record = EXPERIMENT.run(replace(CONFIGS["smoke"], pipeline=False), tmp_path)
    claim = next(c for c in record.claims if c["id"] == "pipeline_lacks_general")
    assert claim["verdict"] == "inconclusive"
    without = {k: v["per_seed"][0] for k, v in record.metrics.items()}
    assert np.isnan(without.pop("recap_minus_pipeline_general"))
    pipeline = {k for k in with_arm if k.startswith("pipeline_")}
    assert pipeline and set(without) == set(with_arm) - pipeline - {"recap_minus_pipeline_general"}
    np.testing.assert_equal(without, {k: with_arm[k] for k in without})
