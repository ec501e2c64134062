import json

import pytest
from icml26_fremia.experiment import CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "fremia" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    for attack in ("naive", "secmi", "pia"):
        for metric in ("auc", "tpr_at_1fpr", "asr", "advantage"):
            plain, filtered, gain = (data["metrics"][f"{attack}_{metric}_{tag}"] for tag in ("plain", "filter", "gain"))
            assert len(gain["per_seed"]) == len(CONFIGS["smoke"].seeds)
            assert gain["mean"] == pytest.approx(filtered["mean"] - plain["mean"])
            assert 0 <= plain["mean"] <= 1
    assert data["figures"] == ["filter_gain.png"]


def test_quick_config_is_within_the_rules():
    quick = CONFIGS["quick"]
    assert len(quick.seeds) >= 3 and quick.tau <= (quick.image_size - 1) // 2


def test_medium_config_attacks_4x_the_images_with_as_many_visits_per_member():
    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.n_members == medium.n_holdout == 4 * quick.n_members
    visits = [c.train_steps * c.batch_size / c.n_members for c in (quick, medium)]
    assert visits[0] == visits[1] == 1500
    assert medium == Config(seeds=quick.seeds, n_members=512, n_holdout=512, train_steps=12000, workers=2)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"denoiser": "transformer"}, "denoiser="),
        ({"tau": 8}, "tau=8"),
        ({"tau_sweep": (1, 9)}, "tau_sweep=9"),
        ({"s": 1.2}, "s=1.2"),
        ({"n_pool": 100, "n_members": 60, "n_holdout": 60}, "n_pool=100"),
        ({"t": 1000}, "t=1000"),
        ({"n_members": 1}, "n_members"),
    ],
)
def test_bad_configs_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        Config(**kwargs)


def test_training_is_a_function_of_the_seed(tmp_path, monkeypatch):
    import torch
    from icml26_fremia.experiment import trained_denoiser

    members = torch.rand(8, 1, 16, 16, generator=torch.Generator().manual_seed(0))
    weights = []
    for folder in ("a", "b", "a"):  # two cold caches, then a cached load
        monkeypatch.setenv("ICML26_CACHE", str(tmp_path / folder))
        torch.manual_seed(len(weights))  # global RNG state must not matter
        weights.append(trained_denoiser(CONFIGS["smoke"], 0, members).state_dict())
    for other in weights[1:]:
        assert all(torch.equal(weights[0][k], other[k]) for k in weights[0])


def test_attacks_run_in_chunks(monkeypatch):
    """The paper config attacks 30000 members: the denoiser must see them in chunks of ATTACK_BATCH, not at once
    (tens of GB of UNet activations)."""
    from icml26_fremia import experiment

    trained, largest = experiment.trained_denoiser, [0]

    def spying(config, seed, members):
        model = trained(config, seed, members)

        def eps_model(x, t):
            largest[0] = max(largest[0], len(x))
            return model(x, t)

        return eps_model

    monkeypatch.setattr(experiment, "trained_denoiser", spying)
    monkeypatch.setattr(experiment, "ATTACK_BATCH", 10, raising=False)
    experiment.measure_seed(CONFIGS["smoke"], 0)  # 32 members, 32 hold-outs
    assert largest[0] == 10
