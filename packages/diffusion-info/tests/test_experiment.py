import json

from icml26_diffusion_info.experiment import CONFIGS, EXPERIMENT


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "diffusion-info" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["profiles.png"]
    metrics = data["metrics"]
    # the exact-score integrals agree with their KL identities even at smoke size
    assert metrics["gmm_mi_identity_error"]["mean"] < 0.2 and metrics["gmm_snn_identity_error"]["mean"] < 0.1
    assert 0 < metrics["gmm_snn_fraction_late"]["mean"] < 1
    assert all(0 <= metrics[f"accuracy_{k}"]["mean"] <= 1 for k in ("conditional", "full", "interval", "late_only"))


def test_quick_config_has_at_least_three_seeds():
    assert len(CONFIGS["quick"].seeds) >= 3 and CONFIGS["paper"].train_steps > CONFIGS["quick"].train_steps


def test_medium_config_trains_longer_and_wider_than_quick():
    from icml26_diffusion_info.experiment import Config

    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.train_steps > 6 * quick.train_steps and medium.width == 2 * quick.width
    assert medium == Config(train_steps=medium.train_steps, width=medium.width) and medium.seeds == quick.seeds
