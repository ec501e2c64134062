"""The smoke config end to end, and the results.json schema."""

import json

from icml26_promos.experiment import CLAIMS, CONFIGS, EXPERIMENT, METHODS


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "promos" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert all(c["measured"]["n"] == len(CONFIGS["smoke"].seeds) for c in data["claims"])
    assert record.claims == data["claims"]
    for m in METHODS:
        assert 0.0 <= data["metrics"][f"auroc_mean.{m}"]["mean"] <= 1.0
    assert "auroc_per_target.png" in data["figures"]


def test_configs_and_claims_are_consistent():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert {c.metric.split(".")[0] for c in CLAIMS} <= {"auroc_injected", "gap"}


def test_medium_config_is_quick_with_the_paper_configs_teacher_and_dominant_budget():
    quick, medium, paper = CONFIGS["quick"], CONFIGS["medium"], CONFIGS["paper"]
    assert medium.teacher_epochs == paper.teacher_epochs > quick.teacher_epochs
    assert medium.teacher_max_nodes == paper.teacher_max_nodes > quick.teacher_max_nodes
    assert medium.dominant_epochs == paper.dominant_epochs > quick.dominant_epochs
    assert (medium.seeds, medium.sources, medium.targets, medium.epochs) == (
        quick.seeds,
        quick.sources,
        quick.targets,
        quick.epochs,
    )
