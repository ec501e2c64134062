import json

import numpy as np
from icml26_retrain_drift.experiment import CONFIGS, EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "retrain-drift" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert sorted(data["figures"]) == ["drift.png", "intra.png", "trained.png"]
    for name in ("intra_ratio_max", "tracking_error", "trained_mmd2_gap"):
        assert len(data["metrics"][name]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert 0 < data["metrics"]["intra_ratio_min"]["mean"] <= data["metrics"]["intra_ratio_max"]["mean"]


def test_configs_grow():
    smoke, quick, paper = (CONFIGS[k] for k in ("smoke", "quick", "paper"))
    assert len(quick.seeds) >= 3 and len(paper.seeds) >= len(quick.seeds)
    assert smoke.grid_n < quick.grid_n < paper.grid_n
    assert np.all(np.diff([smoke.generations, quick.generations, paper.generations]) > 0)


def test_listing_does_not_import_jax():
    import subprocess
    import sys

    code = "import sys, icml26_retrain_drift.experiment as e; e.EXPERIMENT; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
