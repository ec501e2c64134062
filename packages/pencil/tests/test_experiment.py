import json

from icml26_pencil.experiment import EXPERIMENT


def test_smoke_run_writes_results(tmp_path):
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "pencil" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert record.claims == data["claims"]


def test_config_refuses_a_vocabulary_smaller_than_its_samples():
    """A 2-hop x 20 sample holds up to 2 (1 + 20 + 400) = 842 nodes: the paper config had 256 IDs, and tokenize
    refused ~100 hub samples per seed of its CN study, which so could not run."""
    import pytest
    from icml26_pencil.experiment import CONFIGS, Config

    with pytest.raises(ValueError, match="cn_max_nodes"):
        Config(cn_depth=2, cn_neighbors=20, cn_max_nodes=256)
    with pytest.raises(ValueError, match="max_nodes=256"):
        Config(depth=2, neighbors=20, max_nodes=256)
    assert CONFIGS["paper"].cn_max_nodes == CONFIGS["paper"].max_nodes == 842


def test_medium_config_trains_longer_on_quick_sizes_with_more_seeds():
    from icml26_pencil.experiment import CONFIGS

    quick, medium = CONFIGS["quick"], CONFIGS["medium"]
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert medium.cn_epochs == 5 * quick.cn_epochs and medium.epochs > quick.epochs and len(medium.seeds) == 10
    assert medium.pairs_per_epoch == 0 < quick.pairs_per_epoch  # every training edge each epoch
    same = ("d", "layers", "heads", "ffn", "max_nodes", "neighbors", "lr", "batch", "cn_d", "cn_lr", "datasets")
    assert all(getattr(medium, k) == getattr(quick, k) for k in same)
