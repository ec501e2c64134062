"""The smoke config end to end: results.json schema, metrics and figures."""

import json

from icml26_ddpm_gmm.experiment import CONFIGS, EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "ddpm-gmm" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert {"T_slope", "dim_ks_ratio", "K_slope", "eps_slope", "nonunit_d_ratio", "slope_pf_ode"} <= set(
        data["metrics"]
    )
    assert all(len(m["per_seed"]) == len(CONFIGS["smoke"].seeds) for m in data["metrics"].values())
    assert set(data["figures"]) == {"tv_curves.png", "mc_projections.png"}
    assert data["metrics"]["unit_d_ratio"]["mean"] == __import__("pytest").approx(1.0, abs=0.05)
