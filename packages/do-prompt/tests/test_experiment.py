"""Configs, claims and the smoke run end to end (its own cache folder: nothing stale can pass for it)."""

import json

import pytest
from icml26_do_prompt.experiment import CLAIMS, CONFIGS, EXPERIMENT, METHODS, Config


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert CONFIGS["medium"].seeds[:3] == CONFIGS["quick"].seeds  # quick plus seeds, same pipeline
    assert len(CONFIGS["quick"].seeds) >= 3
    assert 0.9 <= CONFIGS["quick"].rho <= 0.95  # the source-domain correlation
    assert len({c.id for c in CLAIMS}) == len(CLAIMS) == 7


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"n_ctx": 0}, "n_ctx"),
        ({"m_env": 4}, "m_env"),
        ({"beta": -1.0}, "beta"),
        ({"tau": 0.0}, "tau"),
        ({"rho": 1.2}, "rho"),
        ({"depth": 3}, "depth"),
        ({"intervention": "swap"}, "intervention"),
        ({"dataset": "cifar"}, "dataset"),
        ({"seeds": ()}, "seeds"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_configs(kwargs, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        Config(**kwargs)


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    EXPERIMENT.run("smoke", tmp_path / "out")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in ("holds", "fails", "inconclusive") for c in data["claims"])
    for method in METHODS:
        for part in ("base_source", "base_shifted", "novel", "probe"):
            assert 0 <= data["metrics"][f"{method}_{part}"]["mean"] <= 1
    assert data["figures"] == ["accuracy.png"]
