"""Pruning metrics as small symbolic expressions, parsed into a whitelist and interpreted on tensors.

A metric scores every weight of a Linear layer; the lowest scores of each comparison group are removed.
Text written by a language model is never ``eval``ed or ``exec``ed: ``parse_metric`` reads it with ``ast``
and accepts only

* the primitives of ``PRIMITIVES`` (the weight ``W`` (out, in), the activation norm ``X`` = ‖X_j‖₂ per input
  column as Wanda computes it, row/column norms and mean magnitudes of ``W``),
* ``+ - * /``, unary ``-``, ``**`` with a numeric exponent in [-4, 4],
* ``abs``, ``log``, ``sqrt``, ``exp`` (``log`` and ``sqrt`` act on ``|a|``, ``log`` adds 1e-12: the protected
  operators of Pruner-Zero's symbolic search),
* numeric constants with |c| <= 1000,

within MAX_CHARS characters, MAX_NODES nodes and MAX_DEPTH levels. ``evaluate_metric`` interprets the tree with
a time limit and returns a finite score of W's shape, or raises ``CandidateRejected`` naming the reason.
"""

from __future__ import annotations

import ast
import math
import time
from dataclasses import dataclass
from typing import Any

import torch

MAX_CHARS = 200
MAX_NODES = 40
MAX_DEPTH = 12
MAX_CONSTANT = 1000.0
MAX_EXPONENT = 4.0
LOG_EPS = 1e-12
TIME_LIMIT_S = 2.0

PRIMITIVES = {
    "W": "the weight matrix W (out, in)",
    "X": "the input activation norm ||X_j||_2 per input column j (1, in)",
    "row_norm": "||W_i,:||_2 per output row (out, 1)",
    "col_norm": "||W_:,j||_2 per input column (1, in)",
    "row_mean": "mean_j |W_ij| per output row (out, 1)",
    "col_mean": "mean_i |W_ij| per input column (1, in)",
}
FUNCTIONS = {"abs": torch.abs, "log": lambda a: torch.log(a.abs() + LOG_EPS), "sqrt": lambda a: a.abs().sqrt()}
FUNCTIONS["exp"] = torch.exp
BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


class CandidateRejected(ValueError):
    """A candidate metric that is not in the language, or whose score is unusable; ``str`` is the reason."""


@dataclass(frozen=True)
class Metric:
    """A parsed metric: ``text`` is the canonical source (``ast.unparse``), ``tree`` the checked expression."""

    text: str
    tree: ast.expr

    def __str__(self) -> str:
        return self.text

    @property
    def uses_activations(self) -> bool:
        """Whether the metric reads X (else pruning needs no calibration pass, as for magnitude)."""
        return any(isinstance(n, ast.Name) and n.id == "X" for n in ast.walk(self.tree))


def _check(node: ast.AST, depth: int, count: list[int]) -> None:
    count[0] += 1
    if count[0] > MAX_NODES:
        raise CandidateRejected(f"more than {MAX_NODES} nodes")
    if depth > MAX_DEPTH:
        raise CandidateRejected(f"deeper than {MAX_DEPTH} levels")
    if isinstance(node, ast.Name):
        if node.id not in PRIMITIVES:
            raise CandidateRejected(f"unknown name {node.id!r}; allowed: {sorted(PRIMITIVES)}")
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise CandidateRejected(f"constant {value!r:.40} is not a finite number")
        if abs(value) > MAX_CONSTANT:
            raise CandidateRejected(f"constant {value!r} outside [-{MAX_CONSTANT:g}, {MAX_CONSTANT:g}]")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand, depth + 1, count)
    elif isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        if isinstance(node.op, ast.Pow):
            exponent = node.right
            if isinstance(exponent, ast.UnaryOp) and isinstance(exponent.op, ast.USub):
                exponent = exponent.operand
            if not isinstance(exponent, ast.Constant) or isinstance(exponent.value, bool):
                raise CandidateRejected("the exponent of ** must be a numeric constant")
            if not isinstance(exponent.value, int | float) or abs(exponent.value) > MAX_EXPONENT:
                raise CandidateRejected(
                    f"exponent {exponent.value!r:.40} outside [-{MAX_EXPONENT:g}, {MAX_EXPONENT:g}]"
                )
        _check(node.left, depth + 1, count)
        _check(node.right, depth + 1, count)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise CandidateRejected(f"call of {ast.unparse(node.func)[:40]!r}; allowed functions: {sorted(FUNCTIONS)}")
        if len(node.args) != 1 or node.keywords:
            raise CandidateRejected(f"{node.func.id}() takes exactly one positional argument")
        _check(node.args[0], depth + 1, count)
    else:
        raise CandidateRejected(f"{type(node).__name__} is not allowed in a metric")


def parse_metric(text: Any) -> Metric:
    """The checked metric of ``text`` (one expression), else ``CandidateRejected`` with the reason."""
    if not isinstance(text, str):
        raise CandidateRejected(f"expected the metric as text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:  # before anything else: bounds the time, memory and recursion of ast.parse
        raise CandidateRejected(f"{len(text)} characters, more than {MAX_CHARS}")
    text = text.strip()
    if not text:
        raise CandidateRejected("empty metric")
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise CandidateRejected(f"not a Python expression: {type(err).__name__}: {err}") from None
    _check(tree, 0, [0])
    return Metric(ast.unparse(tree), tree)


def primitives(W: torch.Tensor, X: torch.Tensor) -> dict[str, torch.Tensor]:
    """The values of ``PRIMITIVES`` for a weight ``W`` (out, in) and activation norms ``X`` (in,)."""
    A = W.abs()
    return {
        "W": W,
        "X": X.reshape(1, -1),
        "row_norm": W.norm(dim=1, keepdim=True),
        "col_norm": W.norm(dim=0, keepdim=True),
        "row_mean": A.mean(dim=1, keepdim=True),
        "col_mean": A.mean(dim=0, keepdim=True),
    }


def _interpret(node: ast.expr, env: dict[str, torch.Tensor], deadline: float) -> torch.Tensor:
    if time.perf_counter() > deadline:
        raise CandidateRejected("time limit exceeded")
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return torch.tensor(float(node.value), dtype=env["W"].dtype)
    if isinstance(node, ast.UnaryOp):
        value = _interpret(node.operand, env, deadline)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](_interpret(node.args[0], env, deadline))
    left, right = _interpret(node.left, env, deadline), _interpret(node.right, env, deadline)
    op = type(node.op)
    if op is ast.Add:
        return left + right
    if op is ast.Sub:
        return left - right
    if op is ast.Mult:
        return left * right
    if op is ast.Div:
        return left / right
    return torch.pow(left, right)


def evaluate_metric(
    metric: Metric, W: torch.Tensor, X: torch.Tensor, time_limit_s: float = TIME_LIMIT_S
) -> torch.Tensor:
    """The score (out, in) of ``metric`` on ``W`` and ``X``; ``CandidateRejected`` when not finite or mis-shaped."""
    env = primitives(W, X)
    deadline = time.perf_counter() + time_limit_s
    with torch.no_grad():
        score = _interpret(metric.tree, env, deadline)
    if score.shape != W.shape:
        raise CandidateRejected(
            f"{metric.text!r} gives shape {tuple(score.shape)}, not one score per weight {tuple(W.shape)}"
        )
    if not bool(torch.isfinite(score).all()):
        raise CandidateRejected(f"{metric.text!r} gives non-finite scores (inf or nan)")
    return score


MAGNITUDE = parse_metric("abs(W)")
WANDA = parse_metric("abs(W) * X")  # |W_ij| * ||X_j||_2 (Wanda, eq. 1)
