import dataclasses
import json

import pytest
from icml26_todoevolve.experiment import CONFIGS, EXPERIMENT, Config, measure_seed


def test_smoke_run_writes_results_and_the_rollouts_as_it_goes(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "todoevolve" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"] and "methods.png" in data["figures"]
    smoke = CONFIGS["smoke"]
    lines = (tmp_path / "rollouts-seed0.jsonl").read_text().splitlines()
    assert len(lines) == smoke.n_train_tasks * 2 * smoke.pairs_per_task
    first = json.loads(lines[0])
    assert {"judgement", "metrics", "usage", "planning_system_usage", "worker_usage", "plan_model_output"} <= set(first)
    for name in ("flash_searcher", "react", "sft", "igpo", "oracle"):
        assert 0 <= data["metrics"][f"success_{name}"]["mean"] <= 1


def test_paper_path_with_a_tiny_llm_in_place_of_smollm2(tmp_path, tiny, monkeypatch):
    import copy

    import icml26_shared

    monkeypatch.setattr(icml26_shared, "load_smollm2", lambda: (copy.deepcopy(tiny[0]), tiny[1]))
    config = dataclasses.replace(
        CONFIGS["smoke"],
        meta_planner="smollm2",
        n_train_tasks=6,
        n_test_tasks=3,
        n_oracle_tasks=1,
        text_max_examples=4,
    )
    out = measure_seed(config, 0, tmp_path)
    for name in ("sft", "correctness_dpo", "igpo"):  # random tiny models: replies that do not parse are failures
        assert 0 <= out[f"success_{name}"] <= 1


@pytest.mark.parametrize(
    ("field", "value"),
    [("meta_planner", "gpt"), ("n_oracle_tasks", 10_000), ("beta", 0.0), ("summary_interval", 0), ("max_steps", 0)],
)
def test_bad_config_values(field, value):
    with pytest.raises(ValueError, match=f"^{field}="):
        Config(**{field: value})


def test_medium_config_is_quick_with_the_paper_configs_tasks_and_official_horizon():
    quick, medium, paper = CONFIGS["quick"], CONFIGS["medium"], CONFIGS["paper"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    for name in ("n_train_tasks", "n_test_tasks", "n_oracle_tasks", "max_steps", "summary_interval"):
        assert getattr(medium, name) == getattr(paper, name) > getattr(quick, name)
    assert (medium.seeds, medium.meta_planner, medium.pairs_per_task, medium.sft_steps, medium.dpo_steps) == (
        quick.seeds,
        quick.meta_planner,
        quick.pairs_per_task,
        quick.sft_steps,
        quick.dpo_steps,
    )
