"""The smoke run end to end, the results.json schema, and the config's bad values."""

import json

import pytest
from icml26_dlebench.experiment import CLAIMS, CONFIGS, EXPERIMENT, MODES, Config
from icml26_dlebench.method import MODES as METHOD_MODES


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "dlebench" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]
    assert data["figures"] == ["dlebench_agreement.png"]
    metrics = data["metrics"]
    for claim in CLAIMS:
        assert len(metrics[claim.metric]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    for regime in ("small", "large"):
        for mode in MODES:
            assert all(-1 <= v <= 1 for v in metrics[f"rho_{regime}_{mode}_if"]["per_seed"])
    assert 0.01 <= metrics["small_area_mean"]["mean"] <= 0.1 < 0.25 <= metrics["large_area_mean"]["mean"]
    assert metrics["editor_precise_human"]["mean"] > metrics["editor_timid_human"]["mean"]


def test_configs():
    assert set(CONFIGS) == {"smoke", "quick", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3
    assert MODES == METHOD_MODES


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"per_type": 0}, "per_type"),
        ({"size": 8}, "size"),
        ({"view_size": 4}, "view_size"),
        ({"view_size": 256}, "view_size"),
        ({"small_area": (0.1, 0.01)}, "small_area"),
        ({"large_area": (0.3, 1.5)}, r"large_area\[1\]"),
        ({"large_area": (0.05, 0.3)}, "large_area"),
        ({"workers": 0}, "workers"),
        ({"seeds": ()}, "seeds"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")


def test_judge_benchmark_holds_one_item_at_a_time(monkeypatch):
    """An item holds three images (~19 MB at the paper's 512 px): the paper's 1890 per benchmark must be made,
    judged and dropped one by one, not held at once (36 GB per worker)."""
    import weakref
    from dataclasses import replace

    from icml26_dlebench import data, experiment

    made, most, make = [], [0], data.make_item

    def counting(*args):
        item = make(*args)
        made.append(weakref.ref(item))
        most[0] = max(most[0], sum(ref() is not None for ref in made))
        return item

    monkeypatch.setattr(data, "make_item", counting)
    experiment.judge_benchmark(replace(CONFIGS["smoke"], per_type=2), 0, "small")
    assert most[0] <= 2  # the item being judged and the next one being made
