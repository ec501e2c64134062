"""The smoke run end to end, the results.json schema, and the config's bad inputs."""

import json

import pytest
from icml26_diffusion_geometry.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "diffusion-geometry" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["heat_maps.png", "lc_vs_phfe.png"]
    metrics = data["metrics"]
    for name in ("id_corr_LC_PHFE", "corr_drop_bootstrap_p", "auroc_sensitivity", "analytic_switch_LC"):
        assert len(metrics[name]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert all(-1 <= v <= 1 for v in metrics["ood_corr_LC_PHFE"]["per_seed"])
    assert all(v <= 1 + 1e-6 for v in metrics["LS_subspace_over_full_max"]["per_seed"])  # sigma(JW) <= sigma(J)
    assert metrics["analytic_max_relative_error"]["mean"] < 1e-6


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["paper"].backbone == "sd3.5-medium" and CONFIGS["paper"].d_low == 64
    assert CONFIGS["quick"].eps == 0.02 and CONFIGS["quick"].sampler_steps == 12
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"backbone": "flux"}, "backbone="),
        ({"eps": 0.0}, "eps="),
        ({"d_low": 0}, "d_low="),
        ({"samples": 2}, "samples="),
        ({"switch_k": -1.0}, "switch_k="),
        ({"full_norm_samples": 500}, "full_norm_samples="),
        ({"seeds": ()}, "seeds="),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Config(**kwargs)


def test_unknown_config_name_is_refused():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")


def test_medium_config_trains_longer_on_more_latents():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert medium.train_steps == 3 * quick.train_steps and medium.samples == 8 * quick.samples
    assert medium == Config(seeds=quick.seeds, train_steps=medium.train_steps, samples=medium.samples)
