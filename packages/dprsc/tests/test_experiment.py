import json

from icml26_dprsc.experiment import EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "dprsc" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_medium_config_is_quick_on_a_larger_graph_with_more_seeds():
    from icml26_dprsc.experiment import CONFIGS, Config

    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.n == 2 * quick.n and len(medium.seeds) == 43 > len(quick.seeds)
    assert medium == Config(seeds=medium.seeds, n=medium.n) and quick == Config(seeds=quick.seeds)
