import json

from icml26_qnn_uap.experiment import CONFIGS, EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "qnn-uap" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_medium_config_is_quick_with_a_larger_optimisation_budget():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.steps == 10 * quick.steps and medium.restarts == 4 * quick.restarts
    assert (medium.seeds, medium.f1_orders, medium.n_train) == (quick.seeds, quick.f1_orders, quick.n_train)
