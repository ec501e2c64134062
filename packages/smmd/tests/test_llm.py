"""The real-LLM path (``llm.py``): numeric targets posed in text, the trained top blocks, fine-tuning and the
SmolLM2 measurement on a tiny random Llama-config model (always), bad input, and SmolLM2's own tokenizer and
weights where the ``llm`` extra is installed."""

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from icml26_smmd import NumericTargetObjective, NumericVocab, SMMDLoss
from icml26_smmd.experiment import CONFIGS, EXPERIMENT, LLM_CLAIMS, Config, measure_llm_seed
from icml26_smmd.llm import (
    IGNORE,
    TrainedTop,
    encode_text_task,
    evaluate,
    finetune,
    llm_available,
    text_examples,
    text_task,
)


class CharTokenizer:
    """One token per character (digits are single tokens, as in SmolLM2's tokenizer), eos last."""

    def __init__(self):
        self.chars = sorted(set("0123456789+=:.,- ") | set("HourhandtdegrsmiTe"))
        self.vocab_size = len(self.chars) + 1
        self.eos_token_id = len(self.chars)

    def encode(self, text, add_special_tokens=False):
        return [self.chars.index(c) for c in text]

    def __call__(self, text):
        return {"input_ids": self.encode(text)}


def tiny_llama(vocab_size, layers=3):
    """A random Llama-config decoder (transformers' own class), the stand-in for SmolLM2."""
    transformers = pytest.importorskip("transformers", reason="the `llm` extra is not installed (transformers)")
    config = transformers.LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).eval()


TINY = replace(
    CONFIGS["smoke"],
    llm_seeds=(0,),
    llm_blocks=1,
    llm_clock_train=16,
    llm_clock_test=8,
    llm_addition_train=16,
    llm_addition_test=8,
    llm_epochs=1,
    llm_batch_size=8,
)


def test_text_examples_pose_the_two_tasks_and_never_repeat():
    prompts, answers, truth = text_examples("clock", 720, np.random.default_rng(0))
    assert len(set(prompts)) == 720 and prompts[0].startswith("Hour hand at ")
    k = prompts.index("Hour hand at 127.5 degrees, minute hand at 90 degrees. Time:")
    assert answers[k] == " 4:15" and truth[k] == 15
    k = prompts.index("Hour hand at 0 degrees, minute hand at 0 degrees. Time:")
    assert answers[k] == " 12:00" and truth[k] == 0
    prompts, answers, truth = text_examples("addition", 50, np.random.default_rng(0))
    a, b = map(int, prompts[0].rstrip("=").split("+"))
    assert 10 <= a <= 99 and 10 <= b <= 99 and answers[0] == str(a + b) and truth[0] == a + b
    with pytest.raises(ValueError, match="n=721"):
        text_examples("clock", 721, np.random.default_rng(0))
    with pytest.raises(ValueError, match="task='chart'"):
        text_examples("chart", 5, np.random.default_rng(0))


def test_numeric_targets_are_the_answer_tokens_with_their_place_values():
    tok = CharTokenizer()
    vocab = NumericVocab.from_tokenizer(tok, max_value=9)
    task = encode_text_task(tok, vocab, ["37+48=", "Time:"], ["85", " 10:05"], np.array([85.0, 1005.0]), read=0)
    eos, digit = tok.eos_token_id, tok.chars.index
    assert task.ids[0].tolist()[:9] == [*tok.encode("37+48=85"), eos]
    assert task.positions[0].tolist()[:3] == [5, 6, 7]  # "=" predicts "8", "8" predicts "5", "5" predicts eos
    assert task.targets[0].tolist() == [digit("8"), digit("5"), eos, IGNORE, IGNORE, IGNORE, IGNORE]
    assert task.places[0].tolist()[:3] == [10.0, 1.0, 0.0]
    # the clock reads only the minute: the answer's last two digits
    clock = encode_text_task(tok, vocab, ["Time:"], [" 10:05"], np.array([5.0]), read=2)
    assert clock.places[0].tolist() == [0.0, 0.0, 0.0, 0.0, 10.0, 1.0, 0.0]
    assert clock.targets[0, -1] == eos


def test_text_task_rejects_an_empty_task_set_and_a_wrong_truth():
    tok = CharTokenizer()
    vocab = NumericVocab.from_tokenizer(tok, max_value=9)
    with pytest.raises(ValueError, match="prompts=\\[\\]"):
        encode_text_task(tok, vocab, [], [], np.array([]), read=0)
    with pytest.raises(ValueError, match="truth=86.0"):
        encode_text_task(tok, vocab, ["37+48="], ["85"], np.array([86.0]), read=0)
    with pytest.raises(ValueError, match="answers="):
        encode_text_task(tok, vocab, ["37+48="], ["85", "1"], np.array([85.0]), read=0)


def test_trained_top_gives_the_full_models_logits_and_trains_only_its_blocks():
    tok = CharTokenizer()
    vocab = NumericVocab.from_tokenizer(tok, max_value=9)
    model = tiny_llama(tok.vocab_size)
    task = text_task(tok, vocab, "clock", 6, np.random.default_rng(0))
    with torch.no_grad():
        full = model(input_ids=task.ids).logits
    top = TrainedTop(model, 1)
    hidden = top.prefix(task.ids)
    with torch.no_grad():
        logits = top(hidden, task.positions)
    expected = full.gather(1, task.positions[..., None].expand(-1, -1, full.shape[-1]))
    assert torch.allclose(logits, expected, atol=1e-5, rtol=1e-5)
    trained = {id(p) for p in top.trained_parameters()}
    assert trained == {id(p) for p in [*model.model.layers[2].parameters(), *model.model.norm.parameters()]}
    assert all(p.requires_grad == (id(p) in trained) for p in model.parameters())
    frozen = {k: v.clone() for k, v in model.state_dict().items() if "layers.2." not in k and k != "model.norm.weight"}
    objective = NumericTargetObjective(SMMDLoss(vocab), 1.0)
    history = finetune(top, objective, hidden, task, 2, 0, 1e-2, 4)
    assert len(history) == 2 and all(math.isfinite(h) for h in history)
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in frozen.items())
    acc, mae = evaluate(top, hidden, task, vocab)
    assert 0 <= acc <= 1 and 0 <= mae <= 59


def test_a_fine_tuning_scope_that_names_no_parameters_is_an_error():
    model = tiny_llama(CharTokenizer().vocab_size, layers=2)
    for bad in (0, 3, True):
        with pytest.raises(ValueError, match=f"n_trainable={int(bad) if bad is not True else -1}"):
            TrainedTop(model, bad)
    for block in model.model.layers:  # a scope whose modules hold no parameters
        for p in block.parameters():
            p.requires_grad_(False)
    model.model.layers[1] = torch.nn.Identity()
    model.model.norm = torch.nn.Identity()
    with pytest.raises(ValueError, match="fine-tuning scope that names parameters"):
        TrainedTop(model, 1)


def test_measure_llm_seed_on_a_tiny_llama_gives_every_metric_from_one_start():
    tok = CharTokenizer()
    model = tiny_llama(tok.vocab_size)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    out = measure_llm_seed(TINY, 0, model, tok)
    assert {f"smollm2_{m}" for m in ("clock_mae_gain_vs_CE", "acc_gain_vs_NTL")} <= set(out)
    assert {c.metric for c in LLM_CLAIMS} <= set(out)
    assert all(math.isfinite(v) for v in out.values())
    assert out["smollm2_clock_mae_gain_vs_CE"] == pytest.approx(
        out["smollm2_clock_CE_mae"] - out["smollm2_clock_SMMD_mae"]
    )
    # the CE run starts from the pretrained weights, so a re-run of CE alone gives the same numbers
    model.load_state_dict(before)
    again = measure_llm_seed(replace(TINY, llm_seeds=(0,)), 0, model, tok)
    assert again["smollm2_addition_CE_mae"] == out["smollm2_addition_CE_mae"]


def test_llm_config_rejects_bad_values():
    for kwargs, name in [
        ({"llm_seeds": (0, 0)}, "llm_seeds"),
        ({"llm_seeds": (-1,)}, "llm_seeds"),
        ({"llm_blocks": 0}, "llm_blocks"),
        ({"llm_clock_train": 700, "llm_clock_test": 21}, "llm_clock_test"),
        ({"llm_addition_test": 0}, "llm_addition_test"),
        ({"llm_lr": 0.0}, "llm_lr"),
    ]:
        with pytest.raises(ValueError, match=f"{name}="):
            Config(**kwargs)


def test_the_smollm2_claims_are_the_toy_claims_with_the_model_named():
    toy = {c.id: c for c in EXPERIMENT.claims if not c.id.startswith("smollm2_")}
    assert len(LLM_CLAIMS) == len(toy) == 7
    for claim in LLM_CLAIMS:
        base = toy[claim.id.removeprefix("smollm2_")]
        assert (claim.op, claim.threshold, claim.paper) == (base.op, base.threshold, base.paper)
        assert claim.statement.startswith("SmolLM2-135M-Instruct") and base.statement in claim.statement
    assert CONFIGS["quick"].llm_seeds == () and len(CONFIGS["medium"].llm_seeds) >= 3


def test_medium_dry_run_builds_and_names_smollm2_when_missing(monkeypatch):
    import icml26_smmd.llm as llm

    monkeypatch.setattr(llm, "llm_available", lambda: False)
    report = EXPERIMENT.dry_run("medium", "cpu")
    text = "\n".join(report.lines())
    assert not report.error and report.step.startswith("ran on cpu"), text
    assert [m.name for m in report.missing] == ["SmolLM2-135M-Instruct weights"], text
    assert "SmolLM2" in report.built.summary


@pytest.fixture(scope="module")
def smollm2():
    if not llm_available():
        pytest.skip("the `llm` extra is not installed (uv sync --extra llm; pip install 'icml26-smmd[llm]')")
    from icml26_shared import load_smollm2

    return load_smollm2()


def test_smollm2_tokenizer_splits_numbers_into_digit_tokens(smollm2):
    _, tok = smollm2
    vocab = NumericVocab.from_tokenizer(tok, max_value=999)
    assert vocab.values.tolist() == list(range(10))  # V_num: the ten digits; every larger value is several tokens
    task = text_task(tok, vocab, "addition", 32, np.random.default_rng(0))
    digits = task.places > 0
    assert digits.sum(dim=1).min() >= 2  # every sum (20..198) spans two or three digit tokens
    # the loss on those multi-token numbers: a right digit costs less than a near miss, a near miss less than a far one
    logits = torch.full((1, 1, len(tok)), -10.0)
    target = torch.tensor([[task.targets[0, 0].item()]])
    value = int(vocab.values[vocab.lookup()[1][target[0, 0]]])
    smmd = SMMDLoss(vocab)
    losses = []
    for guess in (value, (value + 1) % 10 if value < 9 else 8, 0 if value >= 5 else 9):
        logits[0, 0, :] = -10.0
        logits[0, 0, vocab.token_ids[guess]] = 10.0
        losses.append(float(smmd(logits, target)))
    assert losses[0] < 1e-6 < losses[1] < losses[2]


def test_smollm2_trained_top_matches_the_full_model(smollm2):
    model, tok = smollm2
    vocab = NumericVocab.from_tokenizer(tok, max_value=999)
    task = text_task(tok, vocab, "clock", 2, np.random.default_rng(0))
    with torch.no_grad():
        full = model(input_ids=task.ids).logits
    top = TrainedTop(model, CONFIGS["medium"].llm_blocks)
    with torch.no_grad():
        logits = top(top.prefix(task.ids), task.positions)
    expected = full.gather(1, task.positions[..., None].expand(-1, -1, full.shape[-1]))
    assert torch.allclose(logits, expected, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match=r"n_trainable=31.*\(1\.\.30\)"):
        TrainedTop(model, 31)
