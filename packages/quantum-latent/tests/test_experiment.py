import json

from icml26_quantum_latent.experiment import EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "quantum-latent" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_configs_have_enough_seeds():
    from icml26_quantum_latent.experiment import CONFIGS

    assert len(CONFIGS["quick"].seeds) >= 3 and CONFIGS["smoke"].steps < CONFIGS["quick"].steps
