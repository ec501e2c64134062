"""The smoke run end to end, the SmolLM2 arm on a tiny random Llama, the results.json schema, the perturbations,
the medium config's dry run and the config's bad inputs."""

import dataclasses
import json
import math

import icml26_bit_llm.lm
import numpy as np
import pytest
from icml26_bit_llm.experiment import CLAIMS, CONFIGS, EXPERIMENT, LLM_PREFIX, Config, perturbations
from icml26_bit_llm.lm import freeze, tiny_llama, word_tokenizer


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One cache for the module's runs: the tiny LM is pretrained once."""
    return tmp_path_factory.mktemp("cache")


def test_smoke_run_writes_results(tmp_path, monkeypatch, cache):
    monkeypatch.setenv("ICML26_CACHE", str(cache))
    record = EXPERIMENT.run("smoke", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["paper"] == "bit-llm" and data["config_name"] == "smoke"
    assert {c["id"] for c in data["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] in {"holds", "fails", "inconclusive"} for c in data["claims"])
    assert [c["verdict"] for c in record.claims] == [c["verdict"] for c in data["claims"]]  # (nan != nan)
    assert data["figures"] == ["bit_llm.png"]
    metrics = data["metrics"]
    for name in ("prior_cider_d", "prefix_cider_d", "stage2_cider_d", "original_cider_d", "shuffled_cider_d"):
        assert len(metrics[name]["per_seed"]) == len(CONFIGS["smoke"].seeds)
    assert metrics["zeroed_distinct"]["per_seed"] == [1.0, 1.0]  # one constant input, one caption
    assert metrics["identity_cider_d"]["per_seed"] == metrics["original_cider_d"]["per_seed"]
    arm = [c for c in data["claims"] if c["id"].startswith(LLM_PREFIX)]  # smoke has no SmolLM2 arm: not measured
    assert len(arm) == 5 and all(
        c["verdict"] == "inconclusive" and not math.isfinite(c["measured"]["mean"]) for c in arm
    )


def test_llm_arm_runs_beside_the_tiny_lm(tmp_path, monkeypatch, cache):
    """The SmolLM2 arm's code path with a tiny random Llama in SmolLM2's place: its own seeds, every metric
    prefixed, its claims decided on its values."""
    monkeypatch.setenv("ICML26_CACHE", str(cache))
    tokenizer = word_tokenizer()
    loaded = []

    def fake_smollm2():
        loaded.append(1)
        return freeze(tiny_llama(len(tokenizer), dim=32, layers=3, context=32)), tokenizer

    monkeypatch.setattr(icml26_bit_llm.lm, "load_smollm2", fake_smollm2)
    smoke = CONFIGS["smoke"]
    arm = dataclasses.replace(
        smoke, lm="smollm2", seeds=(3, 4), interval=3, n_train=16, n_test=8, sft_steps=2, scst_steps=1, max_new_tokens=6
    )
    record = EXPERIMENT.run(dataclasses.replace(smoke, seeds=(0,), llm_arm=arm), tmp_path)
    metrics = json.loads((tmp_path / "results.json").read_text())["metrics"]
    assert loaded == [1] and len(metrics["original_cider_d"]["per_seed"]) == 1
    assert len(metrics[LLM_PREFIX + "original_cider_d"]["per_seed"]) == 2
    assert (
        metrics[LLM_PREFIX + "xattn_trainable_params"]["per_seed"][0]
        != metrics["xattn_trainable_params"]["per_seed"][0]
    )
    arm_claims = {c["id"]: c["measured"] for c in record.claims if c["id"].startswith(LLM_PREFIX)}
    assert len(arm_claims) == 5 and all(m["n"] == 2 for m in arm_claims.values())
    # paired differences are always defined (the gap fractions are nan where a random LM has no gap to its prior)
    for name in ("xattn_beats_prefix", "scst_improves"):
        assert math.isfinite(arm_claims[LLM_PREFIX + name]["mean"])


def test_perturbations():
    rng = np.random.default_rng(0)
    fmri, coords = rng.standard_normal((4, 9)).astype(np.float32), rng.random((9, 3)).astype(np.float32)
    p = perturbations(fmri, coords, seed=0)
    assert not p["zeroed"][0].any() and np.array_equal(p["identity"][0], fmri)
    shuffled, kept = p["shuffled"]
    assert np.array_equal(kept, coords) and not np.array_equal(shuffled, fmri)
    np.testing.assert_array_equal(np.sort(shuffled, axis=1), np.sort(fmri, axis=1))  # values permuted per sample
    values, places = p["reordered"]
    assert {(*c, v) for c, v in zip(places.tolist(), values[0].tolist())} == {
        (*c, v) for c, v in zip(coords.tolist(), fmri[0].tolist())
    }


def test_configs_and_claims():
    assert set(CONFIGS) == {"smoke", "quick", "medium", "paper"} and len(CONFIGS["quick"].seeds) >= 3
    assert CONFIGS["paper"].lm == "smollm2" and CONFIGS["paper"].interval == 1
    medium, quick = CONFIGS["medium"], CONFIGS["quick"]
    assert medium.scst_steps == 10 * quick.scst_steps and len(medium.seeds) > len(quick.seeds)
    assert medium.llm_arm.lm == "smollm2" and len(medium.llm_arm.seeds) >= 3
    assert len({c.metric for c in CLAIMS}) == len(CLAIMS)
    toy = [c for c in CLAIMS if not c.id.startswith(LLM_PREFIX)]
    for c in toy:  # the SmolLM2 arm's claims are the toy claims' rules on its metrics, and say which model
        twin = next(d for d in CLAIMS if d.id == LLM_PREFIX + c.id)
        assert (twin.metric, twin.op, twin.threshold) == (LLM_PREFIX + c.metric, c.op, c.threshold)
        assert "SmolLM2-135M-Instruct" in twin.statement


def test_medium_dry_run_builds_both_arms():
    report = EXPERIMENT.dry_run("medium", "cpu")
    assert not report.error and report.step.startswith(("ran on cpu", "skipped: ")), report.lines()
    assert "then the SmolLM2 arm: frozen SmolLM2-135M-Instruct (30 layers" in report.built.summary
    assert report.built.flops > EXPERIMENT.build(dataclasses.replace(CONFIGS["medium"], llm_arm=None)).flops


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"lm": "gpt5"}, "lm"),
        ({"interval": 0}, "interval"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"n_subjects": 1}, "n_subjects"),
        ({"sft_lr": 0.0}, "sft_lr"),
        ({"noise": -1.0}, "noise"),
        ({"n_tokens": 0}, "n_tokens"),
        ({"llm_arm": Config()}, "llm_arm"),  # the arm's LM must be SmolLM2
        ({"llm_arm": "smollm2"}, "llm_arm"),
        ({"llm_arm": Config(lm="smollm2", llm_arm=Config(lm="smollm2"))}, "llm_arm"),  # no nesting
    ],
)
def test_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


def test_rejects_unknown_config():
    with pytest.raises(ValueError, match="config="):
        EXPERIMENT.run("huge")
