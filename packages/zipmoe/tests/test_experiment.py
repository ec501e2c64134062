"""The smoke run end to end, the results.json schema, and the experiment's bad inputs."""

import json
from pathlib import Path

import pytest
from icml26_zipmoe.experiment import CLAIMS, CODEC_NAMES, CONFIGS, EXPERIMENT, Config


def test_smoke_run_writes_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "zipmoe" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in EXPERIMENT.claims}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert [(c["id"], c["verdict"]) for c in record.claims] == [(c["id"], c["verdict"]) for c in data["claims"]]
    assert data["figures"] == ["load_latency.png"]
    metrics = data["metrics"]
    assert metrics["bit_exact"]["per_seed"] == [1.0, 1.0]  # lossless reload, whatever the timings
    assert all(0 < r < 1 for r in metrics["size_ratio"]["per_seed"])
    assert all(0 <= v <= 1 for v in metrics["cps_tv_distance"]["per_seed"])
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    assert verdicts["bit_exact_reload"] == "holds" and verdicts["real_weights"] == "inconclusive"  # smoke skips it


def test_configs_and_claims():
    from icml26_zipmoe.codec import CODECS

    assert CODEC_NAMES == CODECS
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"} and len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["quick"].llms == ("smollm2",) and CONFIGS["medium"].llms == ("smollm2", "gemma3")
    assert CONFIGS["medium"].llm_pipeline and not CONFIGS["quick"].llm_pipeline
    assert (
        CONFIGS["quick"].codec == "zstd" and CONFIGS["quick"].num_chunks == 5
    )  # official options (K = 5 is the default)
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"codec": "gzip"}, "codec"),
        ({"num_chunks": 0}, "num_chunks"),
        ({"k": 17}, "k"),
        ({"k": 0}, "k"),
        ({"serve_steps": 65}, "serve_steps"),
        ({"budget_fraction": 1.0}, "budget_fraction"),
        ({"bandwidth": 0.0}, "bandwidth"),
        ({"workers": 0}, "workers"),
        ({"sim_budgets": (0.0,)}, "sim_budgets"),
        ({"n_chars": 10}, "n_chars"),
        ({"llms": ("gpt2",)}, "llms"),
        ({"llms": ("smollm2", "smollm2")}, "llms"),
        ({"tensor_kinds": ()}, "tensor_kinds"),
        ({"tensor_kinds": ("lm_head",)}, "tensor_kinds"),
        ({"llm_layers": (-1,)}, "llm_layers"),
        ({"llms": (), "llm_pipeline": True}, "llm_pipeline"),
        ({"llm_pipeline_layers": 5}, "llm_pipeline_layers"),
        ({"llm_pipeline_steps": 65}, "llm_pipeline_steps"),
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")


def test_reproduction_does_not_import_experiment():
    # issue 16 API gap: experiment.py and reproduction.py imported each other; one direction only
    import ast

    from icml26_zipmoe import reproduction

    tree = ast.parse(Path(reproduction.__file__).read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "experiment" not in modules and "icml26_zipmoe.experiment" not in modules
