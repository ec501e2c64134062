"""The smoke run end to end, the results.json schema, and the config's bad inputs."""

import json

import pytest
from icml26_whispersplat.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config, pooled_psnr


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "whispersplat" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["example.png"]
    metrics = data["metrics"]
    assert metrics["cover_max_abs_diff"]["per_seed"] == [0.0, 0.0]  # lossless, measured by re-rendering
    assert metrics["cover_params_changed"]["per_seed"] == [0.0, 0.0]
    assert all(p < 40 for p in metrics["baseline_cover_psnr"]["per_seed"])  # the baseline's model changed
    assert all(p > metrics["hidden_psnr_cover_view"]["mean"] for p in metrics["hidden_psnr"]["per_seed"])


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    quick = CONFIGS["quick"]
    assert len(quick.seeds) >= 3 and 48 <= quick.image_size <= 64 and quick.n_gaussians >= 300
    assert EXPERIMENT.config("quick") is quick


def test_medium_config_is_quick_with_a_larger_scene_and_key_budget():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert medium.n_gaussians == 2 * quick.n_gaussians and medium.image_size > quick.image_size
    assert medium.steps == 2 * quick.steps and medium.early_budget / medium.steps == quick.early_budget / quick.steps
    assert (medium.seeds, medium.n_views, medium.gpp_fraction, medium.lr) == (
        quick.seeds,
        quick.n_views,
        quick.gpp_fraction,
        quick.lr,
    )


def test_pooled_psnr_is_infinite_only_for_identical_images():
    import torch

    x = torch.rand(4, 4, 3)
    assert pooled_psnr([x, x], [x, x]) == float("inf")
    assert pooled_psnr([x, x + 0.1], [x, x]) == pytest.approx(-10 * torch.log10(torch.tensor(0.005)).item(), rel=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_gaussians": 0}, "n_gaussians"),
        ({"image_size": 8}, "image_size"),
        ({"n_views": 1}, "n_views"),
        ({"fidelity_every": 0}, "fidelity_every"),
        ({"steps": 0}, "steps"),
        ({"early_budget": 300}, "early_budget"),
        ({"lr": 0.0}, "lr"),
        ({"fov": -1.0}, "fov"),
        ({"gpp_fraction": 1.5}, "gpp_fraction"),
        ({"lambda_ssim": -0.1}, "lambda_ssim"),
        ({"secret_elevation": 90.0}, "secret_elevation"),
        ({"key_penalty": -1.0}, "key_penalty"),
        ({"seeds": ()}, "seeds"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)
