"""The metric search: generations of candidate metrics from a proposer, fitness, elitism, GCoT prompts.

Per generation g: the prompt is built from the GCoT graph (``gcot_prompt``) filled with measured weight and
activation statistics and the scores of everything tried so far, or the plain prompt (the ablation); the
proposer returns candidate texts; each is parsed into the safe language (``metric.py``) and scored by a cheap
fitness (``reconstruction_fitness``: -mean relative output error of sampled layers pruned at the target
sparsity with the candidate, per output row). Rejected candidates are kept with their reason. The elite (best
so far) survives every generation. Each record is appended to a JSONL history file as it is made.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from icml26_shared import ChatCompletionsClient, ChatModel, LocalChatModel, check_int, fail

from .allocation import skewness
from .metric import FUNCTIONS, MAGNITUDE, PRIMITIVES, CandidateRejected, Metric, evaluate_metric, parse_metric
from .pruning import LayerStats, check_sparsity, select_mask

PROMPTS = ("gcot", "plain")
ANSWER = re.compile(r"score\s*=\s*`*([^`\n]+)")


@dataclass
class Candidate:
    """One proposal: its text, whether it entered the language, its fitness or the reason it was rejected."""

    generation: int
    text: str
    metric: str | None = None
    fitness: float | None = None
    reason: str | None = None

    @property
    def valid(self) -> bool:
        return self.fitness is not None


# ---------------------------------------------------------------- fitness


def reconstruction_fitness(metric: Metric, layers: Sequence[LayerStats], sparsity: float) -> float:
    """-mean over layers of ||(W - W*mask) x|| / ||W x|| on the kept calibration rows, each layer pruned per
    output row at ``sparsity`` with ``metric``. Raises ``CandidateRejected`` for an unusable score."""
    errors = []
    for layer in layers:
        W, x = layer.weight, layer.inputs
        if x is None:
            raise fail("layers", "LayerStats without inputs", "layers kept with their calibration inputs")
        mask = select_mask(evaluate_metric(metric, W, layer.X), sparsity)
        full = x @ W.T
        errors.append(float((x @ (W * ~mask).T).norm() / full.norm()))
    return -float(np.mean(errors))


# ---------------------------------------------------------------- prompts


def layer_facts(layers: Sequence[LayerStats], outlier_m: float = 5.0) -> dict[str, float]:
    """Measured statistics for the prompt: skew of |W|, share of |W| above M x mean, spread of ||X_j||."""
    A = torch.cat([l.weight.abs().flatten() for l in layers])
    X = torch.cat([l.X.flatten() for l in layers])
    return {
        "weight_skew": skewness(A),
        "weight_outlier_pct": float((A > outlier_m * A.mean()).double().mean() * 100),
        "act_max_over_mean": float(X.max() / X.mean()),
        "act_skew": skewness(X),
    }


GRAMMAR = (
    "Write the metric as ONE line `score = <expression>`. Allowed names: "
    + "; ".join(f"{k}: {v}" for k, v in PRIMITIVES.items())
    + f". Allowed: numbers, + - * / ** (numeric exponent), {', '.join(sorted(FUNCTIONS))}. "
    "In every output row the weights with the lowest score are removed."
)
TASK = (
    "Task: design a pruning metric for the Linear layers of a language model (you), removing {pct:.0f}% of the weights."
)


@dataclass(frozen=True)
class Node:
    """A reasoning node of the GCoT graph: a name, the nodes it builds on, and its text."""

    name: str
    parents: tuple[str, ...]
    text: str


def gcot_graph(facts: dict[str, float], history: Sequence[Candidate], sparsity: float, shown: int = 4) -> list[Node]:
    """The GCoT DAG for one generation, filled from the measured ``facts`` and the ``history`` so far [INF]."""
    scored = sorted((c for c in history if c.valid), key=lambda c: -c.fitness)
    rejected = [c for c in history if not c.valid][-2:]
    best = "; ".join(f"{c.metric} -> {c.fitness:.3f}" for c in scored[:shown]) or "none yet"
    bad = "; ".join(f"{c.text[:40]!r}: {c.reason[:60]}" for c in rejected) or "none"
    return [
        Node(
            "observe_weights",
            (),
            f"Weights: |W| has skewness {facts['weight_skew']:.1f}; "
            f"{facts['weight_outlier_pct']:.2f}% of weights exceed 5x the mean |W| (outliers).",
        ),
        Node(
            "observe_activations",
            (),
            f"Activations: the largest input norm X is {facts['act_max_over_mean']:.1f}x "
            f"the mean (skewness {facts['act_skew']:.1f}): a few input channels are much larger.",
        ),
        Node(
            "hypothesise",
            ("observe_weights", "observe_activations"),
            "A weight matters when removing it changes the layer output W x: combine |W| with X.",
        ),
        Node("review", (), f"Tried metrics with fitness (higher is better, 0 is perfect): {best}. Rejected: {bad}."),
        Node("write_metric", ("hypothesise", "review"), f"Propose a new metric that beats the best one. {GRAMMAR}"),
    ]


def serialise(nodes: Sequence[Node]) -> str:
    """The DAG in topological order (Kahn's algorithm, ties in the given order), one numbered step per node."""
    order, done = [], set()
    pending = list(nodes)
    while pending:
        ready = [n for n in pending if set(n.parents) <= done]
        if not ready:
            raise fail("nodes", [n.name for n in pending], "an acyclic graph whose parents are all nodes")
        order.append(ready[0])
        done.add(ready[0].name)
        pending.remove(ready[0])
    index = {n.name: i + 1 for i, n in enumerate(order)}
    steps = []
    for n in order:
        uses = f" (from steps {', '.join(str(index[p]) for p in n.parents)})" if n.parents else ""
        steps.append(f"Step {index[n.name]} [{n.name}]{uses}: {n.text}")
    return "\n".join(steps)


def build_prompt(kind: str, facts: dict[str, float], history: Sequence[Candidate], sparsity: float) -> str:
    """The GCoT prompt or the plain one (task and grammar only: no statistics, no history)."""
    task = TASK.format(pct=100 * sparsity)
    if kind == "plain":
        return f"{task}\n{GRAMMAR}"
    if kind == "gcot":
        graph = serialise(gcot_graph(facts, history, sparsity))
        return f"{task}\nThink through the steps of this graph in order.\n{graph}"
    raise fail("prompt", kind, f"one of {list(PROMPTS)}")


def extract_metric(reply: str) -> str:
    """The expression of a reply: after ``score =`` when present, else the reply's first non-empty line."""
    if not isinstance(reply, str):
        raise CandidateRejected(f"the proposer returned {type(reply).__name__}, not text")
    found = ANSWER.search(reply)
    if found:
        return found.group(1).strip().rstrip(".;")
    lines = [line.strip().strip("`") for line in reply.splitlines() if line.strip().strip("`")]
    if not lines:
        raise CandidateRejected("the proposer returned nothing")
    return lines[0]


# ---------------------------------------------------------------- proposers


class Proposer(Protocol):
    """Returns ``n`` candidate metric texts for a prompt and the history so far."""

    def propose(self, prompt: str, history: Sequence[Candidate], n: int) -> list[str]: ...


class LLMProposer:
    """Any ``ChatModel`` as a proposer: one chat call per candidate, the reply's ``score = ...`` line kept."""

    system = "You are an expert in pruning neural networks. Answer with one line: score = <expression>."

    def __init__(self, chat: ChatModel) -> None:
        if not isinstance(chat, ChatModel):
            raise fail("chat", type(chat).__name__, "a ChatModel (an object with chat(messages) -> str)")
        self.chat = chat

    def propose(self, prompt: str, history: Sequence[Candidate], n: int) -> list[str]:
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": prompt}]
        return [self.chat.chat(messages) for _ in range(n)]


class LocalLLMProposer(LLMProposer):
    """SmolLM2-135M-Instruct (or the given model) proposing its own pruning metric, sampled at ``temperature``."""

    def __init__(
        self,
        model: Any = None,
        tokenizer: Any = None,
        *,
        temperature: float = 0.8,
        seed: int = 0,
        max_new_tokens: int = 48,
    ) -> None:
        self.local = LocalChatModel(model, tokenizer, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
        super().__init__(self.local)

    def propose(self, prompt: str, history: Sequence[Candidate], n: int) -> list[str]:
        """The n candidates sampled together from one encoding of the prompt."""
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": prompt}]
        return self.local.replies(messages, n)


class ChatCompletionsProposer(LLMProposer):
    """An OpenAI-compatible endpoint the user names (``icml26_shared.ChatCompletionsClient``; no default address)."""

    def __init__(
        self, base_url: str | None = None, model: str | None = None, api_key: str | None = None, **client: Any
    ):
        super().__init__(ChatCompletionsClient(base_url, model, api_key, **client))


LEAVES = (*PRIMITIVES, "1.0", "2.0", "0.5")
UNARY = tuple(sorted(FUNCTIONS))
OPERATORS = ("+", "-", "*", "/")


class MutationProposer:
    """Genetic programming without an LLM (Pruner-Zero style): subtree mutation of, and crossover between,
    the best valid metrics so far; deterministic for a given ``seed``."""

    def __init__(self, seed: int = 0, elite: int = 4) -> None:
        self.rng = np.random.default_rng(check_int("seed", seed, 0))
        self.elite = check_int("elite", elite, 1)

    def _random_tree(self, depth: int) -> str:
        roll = self.rng.random()
        if depth == 0 or roll < 0.35:
            return str(self.rng.choice(LEAVES))
        if roll < 0.6:
            return f"{self.rng.choice(UNARY)}({self._random_tree(depth - 1)})"
        return f"({self._random_tree(depth - 1)} {self.rng.choice(OPERATORS)} {self._random_tree(depth - 1)})"

    def _subtrees(self, tree: ast.expr) -> list[ast.expr]:
        """The expression nodes of a tree, without the function names of calls (they are not operands)."""
        names = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        return [n for n in ast.walk(tree) if isinstance(n, ast.expr) and id(n) not in names]

    def _replace(self, tree: ast.expr, target: ast.expr, new: ast.expr) -> str:
        class Swap(ast.NodeTransformer):
            def visit(self, node: ast.AST) -> ast.AST:
                return new if node is target else super().visit(node)

        copy = ast.parse(ast.unparse(tree), mode="eval").body
        mapping = dict(zip(map(id, self._subtrees(tree)), self._subtrees(copy), strict=True))
        target = mapping[id(target)]
        return ast.unparse(Swap().visit(ast.Expression(copy)).body)

    def propose(self, prompt: str, history: Sequence[Candidate], n: int) -> list[str]:
        parents = [parse_metric(c.metric) for c in sorted((c for c in history if c.valid), key=lambda c: -c.fitness)]
        parents = parents[: self.elite] or [MAGNITUDE]
        out = []
        for _ in range(n):
            first = parents[self.rng.integers(len(parents))]
            nodes = self._subtrees(first.tree)
            target = nodes[self.rng.integers(len(nodes))]
            if self.rng.random() < 0.5 and len(parents) > 1:  # crossover: a subtree of another parent
                other = parents[self.rng.integers(len(parents))]
                donors = self._subtrees(other.tree)
                new = donors[self.rng.integers(len(donors))]
            else:  # mutation: a fresh random subtree
                new = ast.parse(self._random_tree(2), mode="eval").body
            out.append(self._replace(first.tree, target, new))
        return out


# ---------------------------------------------------------------- the loop


def check_texts(name: str, texts: Any) -> None:
    """Candidate texts are a list/tuple of str (a JSONL history line holds them); anything else is refused
    whole, before any of them is scored or written."""
    if not isinstance(texts, list | tuple):
        raise fail(name, type(texts).__name__, "a list of candidate texts (str)")
    odd = [type(t).__name__ for t in texts if not isinstance(t, str)]
    if odd:
        raise fail(name, f"a list holding {', '.join(sorted(set(odd)))}", "a list of candidate texts (str)")


def search(
    proposer: Proposer,
    layers: Sequence[LayerStats],
    sparsity: float,
    generations: int = 3,
    candidates: int = 4,
    prompt: str = "gcot",
    history_path: str | Path | None = None,
    seeds: Sequence[str] = (MAGNITUDE.text,),
    on_candidate: Callable[[Candidate], None] | None = None,
) -> list[Candidate]:
    """Run the search; returns every candidate in order (generation 0 = ``seeds``, the starting population).

    ``history_path``: a JSONL file that gets one line per candidate as soon as it is scored, so a search that
    stops (an endpoint error, a kill) keeps what it did. Proposer errors propagate after that.
    """
    check_sparsity("sparsity", sparsity)
    check_int("generations", generations, 1)
    check_int("candidates", candidates, 1)
    if prompt not in PROMPTS:
        raise fail("prompt", prompt, f"one of {list(PROMPTS)}")
    if not layers or any(l.inputs is None for l in layers):
        raise fail("layers", len(layers), "at least one LayerStats with calibration inputs")
    check_texts("seeds", seeds)
    facts = layer_facts(layers)
    history: list[Candidate] = []
    path = Path(history_path) if history_path is not None else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")

    def record(candidate: Candidate) -> None:
        try:
            metric = parse_metric(extract_metric(candidate.text) if candidate.generation else candidate.text)
            candidate.metric = metric.text
            candidate.fitness = reconstruction_fitness(metric, layers, sparsity)
        except CandidateRejected as err:
            candidate.reason = str(err)
        history.append(candidate)
        if path is not None:
            with path.open("a") as fh:
                fh.write(json.dumps(asdict(candidate)) + "\n")
        if on_candidate is not None:
            on_candidate(candidate)

    for text in seeds:
        record(Candidate(0, text))
    for g in range(1, generations + 1):
        texts = proposer.propose(build_prompt(prompt, facts, history, sparsity), history, candidates)
        check_texts("proposer.propose()", texts)
        for text in texts:
            record(Candidate(g, text))
    return history


def best(history: Sequence[Candidate]) -> Candidate:
    """The fittest valid candidate (the elite); the earliest one among equals."""
    valid = [c for c in history if c.valid]
    if not valid:
        raise fail("history", len(history), "at least one valid candidate")
    return max(valid, key=lambda c: (c.fitness, -history.index(c)))
