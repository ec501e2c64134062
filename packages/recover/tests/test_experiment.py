"""The smoke run end to end, the results.json schema, the checkpoint cache and the config's bad inputs."""

import json

import numpy as np
import pytest
from icml26_recover import experiment
from icml26_recover.data import protection_split
from icml26_recover.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config, measure_seed
from icml26_shared.datasets import FASHION_DIR


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "recover" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["recover_auc.png"]
    for name in ("auc_recover", "auc_loss", "auc_sigma0", "auc_oracle", "ft10_auc_recover"):
        values = data["metrics"][name]["per_seed"]
        assert len(values) == len(CONFIGS["smoke"].seeds) and all(0 <= v <= 1 for v in values)
    assert all(0 <= p <= 1 for p in data["metrics"]["p_clean"]["per_seed"])


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"} and len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["paper"].denoiser == "unet" and CONFIGS["paper"].dataset == "fashion"
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)


def test_medium_config_is_quick_with_more_seeds_and_perturbation_draws():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert len(medium.seeds) == 5 > len(quick.seeds) and medium.repeats == 4 * quick.repeats
    assert (medium.dataset, medium.pretrain_steps, medium.sigmas) == (quick.dataset, quick.pretrain_steps, quick.sigmas)


def test_pretrained_checkpoint_is_cached_and_a_corrupt_one_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    config = Config(
        seeds=(0,),
        n_protected=2,
        n_reference=2,
        n_query=2,
        pretrain_steps=2,
        finetune_steps=(1,),
        main_finetune_steps=1,
    )
    images, labels = np.zeros((20, 1, 4, 4), np.float32), np.repeat(np.arange(2), 10) + 7
    split = protection_split(images, labels, 8, (2, 2, 2), 0)
    first = experiment.pretrained_model(config, split, 0)
    (entry,) = (tmp_path / "cached" / "recover").glob("*.safetensors")
    calls = []
    monkeypatch.setattr("icml26_recover.diffusion.train_ddpm", lambda *a, **k: calls.append(1) or [a[0]])
    second = experiment.pretrained_model(config, split, 0)
    assert not calls and all(
        np.array_equal(a.detach(), b.detach()) for a, b in zip(first.parameters(), second.parameters(), strict=True)
    )
    entry.write_bytes(entry.read_bytes()[:-8] + b"corrupt!")  # fails its sha256 sidecar: rebuilt, not loaded
    experiment.pretrained_model(config, split, 0)
    assert calls == [1]


def test_rejects_unknown_config_and_bad_seeds():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
    with pytest.raises(ValueError, match="seeds="):
        Config(seeds=())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"dataset": "cifar10"}, "dataset"),
        ({"denoiser": "dit"}, "denoiser"),
        ({"metric": "clip"}, "metric"),
        ({"target_class": 10}, "target_class"),
        ({"n_protected": 1}, "n_protected"),
        ({"n_reference": 0}, "n_reference"),
        ({"pretrain_steps": 0}, "pretrain_steps"),
        ({"depth": 1000}, "depth"),
        ({"depth": 5, "num_steps": 6}, "num_steps"),
        ({"loss_t": 1000}, "loss_t"),
        ({"finetune_steps": ()}, "finetune_steps"),
        ({"main_finetune_steps": 7}, "main_finetune_steps"),
        ({"sigmas": (0.0, 1.5)}, "sigmas"),
        ({"lr": 0.0}, "lr"),
        ({"alpha": 0.0}, "alpha"),
        ({"repeats": 0}, "repeats"),
        ({"device": "tpu"}, "device"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


@pytest.mark.slow
@pytest.mark.skipif(not FASHION_DIR.is_dir(), reason="apt-get install dataset-fashion-mnist")
def test_paper_path_runs_on_fashion_with_the_unet(tmp_path, monkeypatch):
    """The paper config's code path (Fashion-MNIST 28x28, diffusers UNet2DModel, SSIM, GPU if any) at a tiny size."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    config = Config(
        seeds=(0,),
        dataset="fashion",
        fashion_images=300,
        target_class=0,
        n_protected=4,
        n_reference=4,
        n_query=4,
        denoiser="unet",
        pretrain_steps=3,
        pretrain_batch=8,
        finetune_steps=(1, 2),
        main_finetune_steps=2,
        finetune_batch=4,
        num_steps=2,
        sigmas=(0.0, 0.2),
        repeats=1,
        metric="ssim",
        loss_draws=1,
    )
    images, labels = experiment.load_images(config)
    values = measure_seed(config, 0, images, labels)
    assert 0 <= values["auc_recover"] <= 1 and 0 <= values["p_clean"] <= 1
