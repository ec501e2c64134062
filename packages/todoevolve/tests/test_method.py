import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_todoevolve.experiment import summarise_records
from icml26_todoevolve.method import (
    degrade_rejected,
    dpo_loss,
    igpo_pairs,
    impedance,
    is_correct,
    log_impedance,
    parse_instruction,
    sft_examples,
    usage,
)


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
        "{not json",  # unparsed: skipped alone, it takes no record with it
        record("iota", "correct"),
        record("odd one out", text="another task"),  # iota and this one have no partner in their task
    ]
    pairs, stats = igpo_pairs(lines, rng)
    assert [(p["chosen"], p["rejected"], p["rule"]) for p in pairs] == [
        ("beta plan long text", "alpha plan", "correctness"),
        ("delta two", "gamma one", "impedance"),
        ("zeta", "eps", "impedance"),
    ]
    assert stats["processed_pairs"] == 5 and stats["skipped_both_incorrect"] == 1
    assert stats["skipped_same_content"] == 1 and stats["unparsed"] == 1 and stats["unpaired"] == 2
    only_correctness, stats = igpo_pairs(lines, rng, use_impedance=False)
    assert [p["rule"] for p in only_correctness] == ["correctness"] and stats["skipped_both_correct"] == 2
    assert all(p["impedance_chosen"] <= p["impedance_rejected"] for p in pairs if p["rule"] == "impedance")


OK_BAD = (("A", "correct"), ("B", "incorrect"))  # two rollouts of a task: A correct, B not


def test_a_blank_line_never_shifts_the_pairs():
    """Issue 27: [task 1 ok, task 1 bad, "", task 2 ok, ...] paired ('task 3', '3A', '2B') before: every pair
    after a blank line mixed two tasks. The official reader drops blank lines; so do both readers here."""
    lines = [json.dumps(record(f"{k}{ab}", ok, text=f"task {k}")) for k in (1, 2, 3) for ab, ok in OK_BAD]
    lines.insert(2, "")
    pairs, stats = igpo_pairs(lines, degrade=False)
    assert [(p["instruction"], p["chosen"], p["rejected"]) for p in pairs] == [
        ("task 1", "1A", "1B"),
        ("task 2", "2A", "2B"),
        ("task 3", "3A", "3B"),
    ]
    assert stats["unparsed"] == 0 and stats["unpaired"] == 0
    assert sft_examples([*lines, "  \n"])[1] == {"kept": 3, "skipped": 3, "unparsed": 0}


def test_records_of_two_tasks_are_never_paired():
    """Interleaved tasks, a stray line or an odd rollout pair nothing across tasks: each task's records pair
    in file order, in the order the second one appears."""
    t1a, t1b, t2a, t2b = (record(f"{k}{ab}", ok, text=f"task {k}") for k in (1, 2) for ab, ok in OK_BAD)
    lines = [t1a, t2a, "{broken", t1b, record("3A", text="task 3"), t2b]
    pairs, stats = igpo_pairs(lines, degrade=False)
    assert [(p["instruction"], p["chosen"], p["rejected"]) for p in pairs] == [
        ("task 1", "1A", "1B"),
        ("task 2", "2A", "2B"),
    ]
    assert stats["processed_pairs"] == 2 and stats["unparsed"] == 1 and stats["unpaired"] == 1


def test_chat_message_inputs_are_joined_as_the_official_parse_instruction():
    """Issue 27: a chat-message list became its Python repr; the official ``parse_instruction`` joins the contents
    of its messages by a blank line, and takes a single message's content."""
    chat = [
        {"role": "system", "content": "You are a meta-planner."},
        {"role": "user", "content": "task X"},
        {"role": "assistant"},  # no content: left out
    ]
    assert parse_instruction({"plan_model_input": chat}) == "You are a meta-planner.\n\ntask X"
    assert parse_instruction({"plan_model_input": {"role": "user", "content": " task Y\n"}}) == "task Y"
    assert parse_instruction({"plan_model_input": " task Z "}) == "task Z"
    lines = [record("plan a", text=chat), record("plan b", "incorrect", text=chat)]
    (example,), _ = sft_examples(lines)
    (pair,), _ = igpo_pairs(lines, degrade=False)
    assert example["instruction"] == pair["instruction"] == "You are a meta-planner.\n\ntask X"


def test_null_and_whitespace_only_texts_are_skipped():
    """Kept (issue 27 agrees it is the sensible choice): the official DPO script trains on the text "None" for a
    null input or output, the official SFT script keeps whitespace-only examples as empty texts; both are skipped
    and counted here."""
    sft_lines = [record(None), record("  \n"), record("a", text=None), record("a", text=" \t")]
    assert sft_examples(sft_lines) == ([], {"kept": 0, "skipped": 4, "unparsed": 0})
    lines = [record(None), record("b", "incorrect"), record("c", text=None), record("d", "incorrect", text=None)]
    pairs, stats = igpo_pairs(lines, degrade=False)
    assert pairs == [] and stats["skipped_empty"] == 1 and stats["no_instruction"] == 2


def test_impedance_past_the_float_range():
    """Issue 27: with 1500 failed calls exp(0.5 * 1500) overflows and the official code raises OverflowError.
    impedance is inf there, log_impedance stays finite, and pairs of such records still rank by impedance."""
    many = record("many", cost=0.01, plan=0.004, work=0.006, fails=1600)
    fewer = record("fewer", cost=0.01, plan=0.004, work=0.006, fails=1500)
    assert impedance(fewer) == math.inf
    assert log_impedance(fewer) == pytest.approx(math.log(0.01 + 1e-9) + 750 + 0.5 * 0.004 / 0.006, rel=1e-12)
    for lines in ([many, fewer], [fewer, many]):
        (pair,), _ = igpo_pairs(lines, degrade=False)
        assert (pair["chosen"], pair["rejected"]) == ("fewer", "many")
    summary = summarise_records([fewer, record("x")])
    assert summary["log_impedance"] == pytest.approx((log_impedance(fewer) + log_impedance(record("x"))) / 2)
    assert summary["impedance"] == math.inf


@given(st.integers(0, 1400), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_log_impedance_is_the_log_of_impedance(fails, stability, cost):
    r = record("x", cost=cost, fails=fails, stability=stability)
    assert log_impedance(r) == pytest.approx(math.log(impedance(r)), rel=1e-12, abs=1e-12)


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
