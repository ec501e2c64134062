import json

from icml26_dynamic_submodular.experiment import CONFIGS, EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "dynamic-submodular" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_medium_config_reaches_larger_ranks_with_more_seeds():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert max(medium.capacities) == 8 > max(quick.capacities) and min(medium.capacities) == 1
    assert len(medium.seeds) == 17 and medium.n_digits > quick.n_digits and medium.steps > medium.n_digits
    assert (medium.k, medium.eps, medium.n_sets, medium.p_del) == (quick.k, quick.eps, quick.n_sets, quick.p_del)
