import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_todoevolve.method import degrade_rejected, dpo_loss, igpo_pairs, impedance, is_correct, sft_examples, usage


def record(output, judgement="correct", cost=0.01, plan=0.004, work=0.006, fails=0, stability=1.0, text="task"):
    return {
        "plan_model_input": text,
        "plan_model_output": output,
        "judgement": judgement,
        "metrics": {"failed_tool_calls": fails, "plan_stability": stability},
        "usage": {"total_cost_usd": cost},
        "planning_system_usage": {"cost_usd": plan},
        "worker_usage": {"cost_usd": work},
    }


def test_usage_uses_the_official_prices_and_rounding():
    u = usage(1_000_000, 1_000_000, 1_000_000, 1_000_000, steps=3)
    assert u["planning_system_usage"]["cost_usd"] == 3.5  # 0.50 + 3.0 per million
    assert u["worker_usage"]["cost_usd"] == 2.25  # 0.25 + 2.0 per million
    assert u["usage"]["total_cost_usd"] == 5.75 and u["usage"]["total_tokens"] == 4_000_000
    assert usage(1, 0, 0, 0)["planning_system_usage"]["cost_usd"] == 0.0  # 5e-7 USD rounds to 6 decimals


def test_impedance_closed_form():
    r = record("x", cost=0.01, plan=0.004, work=0.006, fails=2, stability=0.75)
    expected = (0.01 + 1e-9) * math.exp(0.5 * 2 + 2.0 * 0.25 + 0.5 * 0.004 / 0.006)
    assert impedance(r) == pytest.approx(expected, rel=1e-12)


def test_impedance_official_defaults():
    # no cost, no failures, stability 1, and a worker cost under 1e-6: bureaucracy falls back to 1.0
    assert impedance({}) == pytest.approx(1e-9 * math.exp(0.5), rel=1e-12)
    assert impedance(record("x", stability=1.7)) == impedance(record("x", stability=1.0))  # turbulence >= 0


@given(st.integers(0, 20), st.floats(0.0, 1.0), st.floats(1e-4, 1.0))
def test_each_failed_call_multiplies_impedance_by_sqrt_e(fails, stability, cost):
    a = impedance(record("x", cost=cost, fails=fails, stability=stability))
    b = impedance(record("x", cost=cost, fails=fails + 1, stability=stability))
    assert b / a == pytest.approx(math.exp(0.5), rel=1e-9)


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        (record("x", cost=-0.1), "total_cost_usd"),
        (record("x", stability=float("nan")), "plan_stability"),
        (record("x", fails=-1), "failed_tool_calls"),
        (record("x", fails=1.5), "failed_tool_calls"),
        (record("x", plan=-1.0), "planning_system_usage.cost_usd"),
        (record("x", work=float("inf")), "worker_usage.cost_usd"),
        ("not a record", "entry"),
    ],
)
def test_impedance_bad_inputs(entry, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        impedance(entry)


def test_usage_bad_inputs():
    with pytest.raises(ValueError, match="^worker_input_tokens=-3"):
        usage(0, 0, -3, 0)


@pytest.mark.parametrize(
    ("judgement", "ok"), [("Correct", True), ("the answer is correct.", True), ("incorrect", False), ("", False)]
)
def test_is_correct(judgement, ok):
    assert is_correct({"judgement": judgement}) is ok


def test_pair_rules():
    rng = np.random.default_rng(0)
    lines = [
        record("alpha plan", "incorrect"),
        record("beta plan long text", "correct"),  # rule 1, B wins
        record("gamma one", "correct", cost=0.02),
        record("delta two", "correct", cost=0.01),  # rule 2, B cheaper
        record("eps", "correct", cost=0.01),
        record("zeta", "correct", cost=0.01),  # tie: B wins
        record("eta", "incorrect"),
        record("theta", "incorrect"),  # rule 3
        record("same", "correct"),
        record("same", "incorrect"),  # identical text
        "{not json",
        record("iota", "correct"),  # unparsed
        record("odd one out"),
    ]
    pairs, stats = igpo_pairs(lines, rng)
    assert [(p["chosen"], p["rejected"], p["rule"]) for p in pairs] == [
        ("beta plan long text", "alpha plan", "correctness"),
        ("delta two", "gamma one", "impedance"),
        ("zeta", "eps", "impedance"),
    ]
    assert stats["processed_pairs"] == 6 and stats["skipped_both_incorrect"] == 1
    assert stats["skipped_same_content"] == 1 and stats["unparsed"] == 1 and stats["odd_last_line"] == 1
    only_correctness, stats = igpo_pairs(lines, rng, use_impedance=False)
    assert [p["rule"] for p in only_correctness] == ["correctness"] and stats["skipped_both_correct"] == 2
    assert all(p["impedance_chosen"] <= p["impedance_rejected"] for p in pairs if p["rule"] == "impedance")


def test_too_similar_rejected_texts_are_degraded_or_counted():
    chosen = "analysis " * 10 + "<<<PYTHON>>>import os\ntry: x<<<END_PYTHON>>><<<YAML>>>a: 1<<<END_YAML>>>"
    rejected = chosen.replace("a: 1", "a: 2")
    lines = [json.dumps(record(chosen, cost=0.01)), json.dumps(record(rejected, cost=0.02))]
    pairs, stats = igpo_pairs(lines, np.random.default_rng(1))
    assert stats["augmented_too_similar"] == 1 and pairs[0]["rejected"] != rejected
    kept, stats = igpo_pairs(lines, degrade=False)
    assert stats["too_similar_kept"] == 1 and kept[0]["rejected"] == rejected
    with pytest.raises(ValueError, match="^rng=None"):
        igpo_pairs(lines)


@given(st.integers(0, 2**31))
def test_degradation_always_changes_a_tagged_text(seed):
    text = "analysis " * 10 + "<<<PYTHON>>>import os\ntry: x<<<END_PYTHON>>><<<YAML>>>a: 1<<<END_YAML>>>"
    assert degrade_rejected(text, np.random.default_rng(seed)) != text


def test_sft_examples_keep_correct_non_empty_ones():
    lines = [record("a"), record("b", "incorrect"), record("", "correct"), "garbage", record("c", text="")]
    examples, stats = sft_examples(lines)
    assert examples == [{"instruction": "task", "input": "", "output": "a"}]
    assert stats == {"kept": 1, "skipped": 3, "unparsed": 1}


def test_dpo_loss_closed_form_and_reference_point():
    zero = torch.zeros(3)
    assert float(dpo_loss(zero, zero, zero, zero)) == pytest.approx(math.log(2))
    pc, pr = torch.tensor([-1.0, -2.0]), torch.tensor([-3.0, -1.0])
    rc, rr = torch.tensor([-2.0, -2.0]), torch.tensor([-2.0, -2.0])
    margins = [(-1.0 + 2.0) - (-3.0 + 2.0), (-2.0 + 2.0) - (-1.0 + 2.0)]
    expected = np.mean([math.log1p(math.exp(-0.1 * m)) for m in margins])
    assert float(dpo_loss(pc, pr, rc, rr, beta=0.1)) == pytest.approx(expected, rel=1e-6)


def test_dpo_gradient_raises_chosen_and_lowers_rejected():
    pc, pr = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    dpo_loss(pc, pr, torch.zeros(2), torch.zeros(2)).backward()
    assert (pc.grad < 0).all() and (pr.grad > 0).all()


def test_dpo_bad_inputs():
    z = torch.zeros(2)
    with pytest.raises(ValueError, match="^beta=0"):
        dpo_loss(z, z, z, z, beta=0)
    with pytest.raises(ValueError, match="expected the same length"):
        dpo_loss(z, torch.zeros(3), z, z)
    with pytest.raises(ValueError, match="^policy_chosen="):
        dpo_loss([0.0], z, z, z)
