import json

from icml26_online_matching.experiment import CONFIGS, EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "online-matching" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_medium_config_is_quick_with_the_paper_donor_types():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.K == CONFIGS["paper"].K == 1000 and medium.n_history == CONFIGS["paper"].n_history
    assert medium.n > quick.n and medium.T > quick.T and medium.seeds == quick.seeds
    assert max(medium.cluster_sizes) == medium.n and min(medium.cluster_sizes) == 1
