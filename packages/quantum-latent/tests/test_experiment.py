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


def test_medium_config_is_quick_with_longer_training_on_more_molecules():
    from icml26_quantum_latent.experiment import CONFIGS

    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.qm9_steps == 10 * quick.qm9_steps and medium.qm9_molecules == 5 * quick.qm9_molecules
    assert medium.steps == 5 * quick.steps
    assert (medium.seeds, medium.m, medium.n, medium.m_qm9, medium.n_qm9, medium.qm9_n_critic) == (
        quick.seeds,
        quick.m,
        quick.n,
        quick.m_qm9,
        quick.n_qm9,
        quick.qm9_n_critic,
    )
