"""The metric language: whitelist parsing, hostile inputs, interpretation on tensors."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_autoprune.metric import (
    MAGNITUDE,
    WANDA,
    CandidateRejected,
    evaluate_metric,
    parse_metric,
    primitives,
)

W = torch.randn(6, 8, generator=torch.Generator().manual_seed(0))
X = torch.rand(8, generator=torch.Generator().manual_seed(1)) + 0.1

HOSTILE = {
    "import": "__import__('os').system('echo pwned')",
    "attribute": "W.numpy()",
    "dunder": "W.__class__.__bases__",
    "dunder name": "__builtins__",
    "lambda": "(lambda: 1)()",
    "list comprehension": "[w for w in W]",
    "generator": "sum(w for w in W)",
    "string": "'abc'",
    "bytes": "b'abc'",
    "huge power": "W ** 10 ** 10",
    "power of a name": "W ** W",
    "huge constant": "W * 1e300",
    "unknown function": "eval('1')",
    "unknown name": "os",
    "keyword argument": "abs(W, out=W)",
    "subscript": "W[0]",
    "comparison": "W > 0",
    "walrus": "(a := W)",
    "statement": "import os",
    "two arguments": "log(W, 2)",
    "bool constant": "W * True",
    "empty": "   ",
    "not python": "score is |W|",
    "deep nesting": "(" * 10_000 + "W" + ")" * 10_000,
    "deep but short": "-" * 30 + "W",
    "too many nodes": "+".join(["W"] * 50),
    "one megabyte": "W" + " " * 1_000_000,
    "one megabyte of code": "W + " * 250_000 + "W",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_candidates_are_rejected_with_a_reason(name):
    with pytest.raises(CandidateRejected) as info:
        parse_metric(HOSTILE[name])
    assert str(info.value)


def test_non_text_is_rejected():
    with pytest.raises(CandidateRejected, match="as text"):
        parse_metric(None)


def test_nothing_is_executed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ("open('x', 'w')", "__import__('pathlib').Path('x').touch()"):
        with pytest.raises(CandidateRejected):
            parse_metric(text)
    assert not (tmp_path / "x").exists()


def test_canonical_text_and_known_metrics():
    assert parse_metric("  abs( W )*X ").text == "abs(W) * X"
    assert torch.equal(evaluate_metric(MAGNITUDE, W, X), W.abs())
    assert torch.allclose(evaluate_metric(WANDA, W, X), W.abs() * X.reshape(1, -1))


def test_primitives_match_their_definitions():
    env = primitives(W, X)
    assert torch.allclose(env["row_norm"][:, 0], torch.linalg.vector_norm(W, dim=1))
    assert torch.allclose(env["col_mean"][0], W.abs().mean(0))
    score = evaluate_metric(parse_metric("row_norm + 0 * W"), W, X)
    assert score.shape == W.shape and torch.allclose(score[:, 3], env["row_norm"][:, 0])


def test_protected_log_and_sqrt_and_negative_exponent():
    score = evaluate_metric(parse_metric("log(W) + sqrt(W) + W ** -2"), W, X)
    expected = torch.log(W.abs() + 1e-12) + W.abs().sqrt() + W**-2
    assert torch.allclose(score, expected)


@pytest.mark.parametrize(
    ("text", "reason"),
    [("W / 0", "non-finite"), ("exp(exp(exp(abs(W) * 100)))", "non-finite"), ("X", "shape"), ("2.0", "shape")],
)
def test_unusable_scores_are_rejected(text, reason):
    with pytest.raises(CandidateRejected, match=reason):
        evaluate_metric(parse_metric(text), W, X)


def test_time_limit():
    with pytest.raises(CandidateRejected, match="time limit"):
        evaluate_metric(WANDA, W, X, time_limit_s=-1.0)


@given(
    st.lists(st.sampled_from(["W", "X", "row_norm", "col_mean", "abs(W)", "2.0"]), min_size=1, max_size=6),
    st.lists(st.sampled_from(["+", "*", "-"]), min_size=5, max_size=5),
)
def test_parsed_sums_and_products_evaluate_like_torch(leaves, ops):
    text = " ".join(x for pair in zip(["abs(W)", *leaves], ops) for x in pair) + " W"
    env = {k: v for k, v in primitives(W, X).items()}
    expected = eval(text, {"abs": torch.abs}, env)  # a trusted reference on our own generated text
    assert torch.allclose(evaluate_metric(parse_metric(text), W, X), torch.broadcast_to(expected, W.shape))
