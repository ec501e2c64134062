import json

from icml26_spd_sheaf.experiment import EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "spd-sheaf" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_medium_config_is_quick_with_more_training_molecules_and_seeds():
    from icml26_spd_sheaf.experiment import CONFIGS

    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(medium.seeds) == 17 and medium.molecule_limit > quick.molecule_limit
    assert medium.epochs == 2 * quick.epochs and medium.depth_epochs == 2 * quick.depth_epochs
    assert medium.depth_molecules > quick.depth_molecules and medium.expressivity_epochs > quick.expressivity_epochs
    assert (medium.molecule_sets, medium.hidden, medium.channels, medium.depths, medium.neighbourhoods) == (
        quick.molecule_sets,
        quick.hidden,
        quick.channels,
        quick.depths,
        quick.neighbourhoods,
    )
