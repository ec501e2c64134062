"""Engrams of facts a pretrained LLM knows: probe, erase, compare with gradient ascent, on any causal LM.

The same method code as for the MLPs (``collect_statistics``, ``compute_engrams``, ``erase``) runs on the LLM's
``nn.Linear`` layers: ``CausalLM`` makes a Hugging Face model (or the package's ``TinyLM``) a module from token
ids (n, T) to next-token logits (n, T, V). A fact is a plain prompt and an answer; the rows that count are the
positions that *predict* the answer's tokens (the last prompt token and every answer token but the last), which
is the official answer-token masking moved one row earlier so that a one-token answer has a row [INF]. A fact
is known when greedy decoding gives the answer, i.e. every answer token is the argmax at its row (teacher
forcing with the answer is then exactly the greedy continuation).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_open_interval, derive, fail
from torch import nn

from .data import Fact

IGNORE = -100  # label of a position that does not count (the official masking's value)
DECODER_LISTS = ("layers", "blocks", "h")  # the ModuleList names of decoder layers (HF Llama/Gemma, TinyLM, GPT-2)


class CausalLM(nn.Module):
    """Token ids (n, T) -> next-token logits (n, T, V) of a wrapped causal LM; its layers keep their names
    under ``lm.``. Right padding needs no attention mask: causal attention never looks at later positions."""

    def __init__(self, lm: nn.Module):
        super().__init__()
        self.lm = lm

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if hasattr(self.lm, "config"):  # a transformers model: no key-value cache, logits only
            return self.lm(input_ids=ids, use_cache=False).logits
        return self.lm(ids)


def decoder_linears(model: nn.Module, layers: Sequence[int] = ()) -> list[str]:
    """Names of the ``nn.Linear`` layers inside the decoder layers ``layers`` (empty: all) of ``model``.

    The output head (tied to the input embedding in SmolLM2) is not a decoder layer, so it is never edited.
    Raises naming ``layers`` when an index is not a decoder layer of the model.
    """
    pattern = re.compile(rf"(?:^|\.)(?:{'|'.join(DECODER_LISTS)})\.(\d+)\.")
    found: dict[int, list[str]] = {}
    for name, module in model.named_modules():
        match = pattern.search(name)
        if match and isinstance(module, nn.Linear):
            found.setdefault(int(match.group(1)), []).append(name)
    if not found:
        raise fail("model", type(model).__name__, f"a model with decoder layers in a ModuleList named {DECODER_LISTS}")
    n = max(found) + 1
    for index in layers:
        if not isinstance(index, int) or index not in found:
            raise fail("llm_layers", index, f"decoder layer indices in [0, {n})")
    return [name for index in sorted(set(layers) or found) for name in found[index]]


def encode(tokenizer, pairs: Sequence[tuple[str, str]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(prompt, answer) pairs as right-padded ids (n, T) and next-token labels (n, T): ``labels[t]`` is the
    answer token that position ``t`` predicts, ``IGNORE`` elsewhere. The answer follows the prompt after a space."""
    if not pairs:
        raise fail("pairs", pairs, "at least one (prompt, answer) pair")
    rows, labels = [], []
    for prompt, answer in pairs:
        p = list(tokenizer(prompt)["input_ids"])
        a = list(tokenizer(" " + answer, add_special_tokens=False)["input_ids"])
        if not p or not a:
            raise fail("pairs", (prompt, answer), "a prompt and an answer of at least one token each")
        rows.append(p + a)
        labels.append([IGNORE] * (len(p) - 1) + a + [IGNORE])
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    out = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for i, (row, label) in enumerate(zip(rows, labels, strict=True)):
        ids[i, : len(row)] = torch.tensor(row)
        out[i, : len(label)] = torch.tensor(label)
    return ids, out


@torch.no_grad()
def answer_hits(
    model: nn.Module, ids: torch.Tensor, labels: torch.Tensor, batch_size: int = 32
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: 1.0 when greedy decoding gives the whole answer (every answer token is the argmax at its row),
    and the mean negative log-likelihood of the answer tokens."""
    check_int("batch_size", batch_size, 1)
    model.eval()
    hits, nlls = [], []
    for start in range(0, ids.shape[0], batch_size):
        logits = model(ids[start : start + batch_size]).float()
        y = labels[start : start + batch_size]
        counted = y != IGNORE
        if not counted.any(1).all():
            raise fail("labels", "a row without answer tokens", "at least one counted position per row")
        wrong = (logits.argmax(-1) != y) & counted
        nll = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE, reduction="none")
        hits.append((~wrong.any(1)).double())
        nlls.append(nll.sum(1) / counted.sum(1))
    return torch.cat(hits).numpy(), torch.cat(nlls).double().numpy()


@dataclass(frozen=True)
class Probe:
    """The facts a model knows: ``facts`` with the ``answers`` it gives (one spelling each), encoded as
    ``ids``/``labels``; ``candidates`` facts were asked, ``excluded`` of them answered wrongly and were dropped."""

    facts: list[Fact]
    answers: list[str]
    ids: torch.Tensor
    labels: torch.Tensor
    candidates: int
    excluded: int


def probe(model: nn.Module, tokenizer, facts: Sequence[Fact], pad_id: int) -> Probe:
    """Ask ``model`` every fact (each accepted spelling); keep those whose greedy answer is right.

    A fact answered wrongly is excluded and counted, never silently dropped. Raises when ``facts`` is empty or
    the model knows none of them.
    """
    if not facts:
        raise fail("facts", facts, "a non-empty probe set")
    pairs = [(fact.prompt, answer) for fact in facts for answer in fact.answers]
    ids, labels = encode(tokenizer, pairs, pad_id)
    hits, _ = answer_hits(model, ids, labels)
    kept, answers, rows = [], [], []
    position = 0
    for fact in facts:
        span = range(position, position + len(fact.answers))
        right = [i for i in span if hits[i] == 1.0]
        if right:
            kept.append(fact)
            answers.append(pairs[right[0]][1])
            rows.append(right[0])
        position = span.stop
    if not kept:
        raise fail("facts", f"{len(facts)} facts, none answered right", "a probe set the model knows in part")
    index = torch.tensor(rows)
    return Probe(kept, answers, ids[index], labels[index], len(facts), len(facts) - len(kept))


def split_countries(facts: Sequence[Fact], seed: int, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint forget sets A and B as boolean masks over ``facts``: the facts of ``ceil(fraction * n)``
    countries each, drawn from a permutation of the ``n`` countries seeded by ``seed``; the rest is retained."""
    check_open_interval("fraction", fraction, 0.0, 0.5)
    countries = sorted({f.country for f in facts})
    k = math.ceil(fraction * len(countries))
    if 2 * k >= len(countries):
        raise fail("facts", f"{len(countries)} countries", f"more than {2 * k} countries (two forget sets and a rest)")
    order = np.random.default_rng(derive(seed, "llm", "split")).permutation(len(countries))
    a = {countries[i] for i in order[:k]}
    b = {countries[i] for i in order[k : 2 * k]}
    owner = np.array([f.country for f in facts])
    return np.isin(owner, sorted(a)), np.isin(owner, sorted(b))
