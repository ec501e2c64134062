"""Tokenisation of numbers and the numeric sub-vocabulary V_num with its bijection pi (paper Sec. 3.1).

``NumberTokenizer`` is a tiny, deterministic tokenizer with the two tokenisations the paper meets in
real LLMs: digit-level (``max_number_token=9``: every number is split into digit tokens, V_num = 0..9)
and multi-digit (``max_number_token=999``: integers up to that bound without a leading zero are one
token). It satisfies the ``TokenizerLike`` protocol of the official code (``vocab_size``,
``encode(text, add_special_tokens=False)``), so a HuggingFace tokenizer can be used in its place.

``NumericVocab`` holds V_num: the values v_i in ascending order (pi maps token -> index i) and their
token ids. It is built by probing integers (``from_tokenizer``, the official code's instantiation) or
by parsing every vocabulary token as a number (``from_token_strings``, the paper's Algorithm 1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from icml26_shared import check_int, fail

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>")
SYMBOL_TOKENS = ("+", "-", "*", "=", ":", "?", ".")
WORD_TOKENS = ("what", "time", "is", "it", "sum")
PIECE = re.compile(r"\d+|[a-z]+|\S")


class TokenizerLike(Protocol):
    """What V_num construction needs from a tokenizer (HuggingFace tokenizers satisfy it)."""

    vocab_size: int

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]: ...


class NumberTokenizer:
    """Special, symbol and word tokens, then the number tokens ``"0" .. str(max_number_token)``.

    A run of digits is one token if it has no leading zero (or is ``"0"``) and its value is at most
    ``max_number_token``; otherwise it is split into digit tokens, as byte-pair tokenizers do.
    """

    def __init__(self, max_number_token: int = 9) -> None:
        self.max_number_token = check_int("max_number_token", max_number_token, 9)
        self.tokens = [*SPECIAL_TOKENS, *SYMBOL_TOKENS, *WORD_TOKENS] + [
            str(v) for v in range(self.max_number_token + 1)
        ]
        self.token_to_id = {t: i for i, t in enumerate(self.tokens)}
        self.vocab_size = len(self.tokens)
        self.pad_id, self.bos_id, self.eos_id = (self.token_to_id[t] for t in SPECIAL_TOKENS)

    def _number_pieces(self, digits: str) -> list[str]:
        if (digits == "0" or not digits.startswith("0")) and int(digits) <= self.max_number_token:
            return [digits]
        return list(digits)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        """Token ids of ``text`` (whitespace separates, never a token); ``<bos> ... <eos>`` if asked."""
        ids = []
        for piece in PIECE.findall(text):
            pieces = self._number_pieces(piece) if piece.isdigit() else [piece]
            for p in pieces:
                if p not in self.token_to_id:
                    raise fail("text", text, f"text made of numbers and the tokens {self.tokens[:15]}; got {p!r}")
                ids.append(self.token_to_id[p])
        return [self.bos_id, *ids, self.eos_id] if add_special_tokens else ids

    def decode(self, ids: Sequence[int]) -> str:
        """The tokens of ``ids`` joined without separators (numbers and symbols read back as text)."""
        out = []
        for i in ids:
            check_int("ids", int(i), 0, self.vocab_size - 1)
            out.append(self.tokens[int(i)])
        return "".join(out)


def _parse_number(token: str) -> float | None:
    """Algorithm 1's deterministic parse: the token's float value if it is a plain number, else None."""
    text = token.strip().lstrip("\u0120\u2581")  # byte-level / sentencepiece word-start markers
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class NumericVocab:
    """V_num: the distinct ``values`` v (N,) in ascending order and the ``token_ids`` (M >= N,) that carry them.

    Several token ids may carry one value (GPT-2's "3" and "Ġ3", a full-width "３"): the kernel is over
    values, so pi maps every such token to the index i of its value, ``value_index[j]`` for ``token_ids[j]``.
    Token ids are sorted by (value, id); with one token per value ``token_ids[i]`` carries ``values[i]``.
    """

    values: torch.Tensor
    token_ids: torch.Tensor
    value_index: torch.Tensor
    vocab_size: int

    def __init__(self, values: Sequence[float], token_ids: Sequence[int], vocab_size: int) -> None:
        """``values[j]`` is the value of ``token_ids[j]``; values may repeat, token ids may not."""
        vocab_size = check_int("vocab_size", vocab_size, 1)
        values_t = torch.as_tensor(list(values), dtype=torch.float64)
        ids_t = torch.as_tensor(list(token_ids), dtype=torch.long)
        if values_t.ndim != 1 or values_t.numel() == 0:
            raise fail("values", list(values), "a non-empty sequence of numbers")
        if not torch.isfinite(values_t).all():
            raise fail("values", list(values), "finite numbers")
        if ids_t.shape != values_t.shape:
            raise fail("token_ids", list(token_ids), f"{values_t.numel()} token ids, one per value")
        if torch.unique(ids_t).numel() != ids_t.numel():
            raise fail("token_ids", list(token_ids), "distinct token ids")
        if ids_t.min() < 0 or ids_t.max() >= vocab_size:
            raise fail("token_ids", list(token_ids), f"ids in [0, {vocab_size - 1}]")
        distinct, value_index = torch.unique(values_t, sorted=True, return_inverse=True)
        order = torch.argsort(value_index * vocab_size + ids_t)  # by value (pi), then by token id
        object.__setattr__(self, "values", distinct)
        object.__setattr__(self, "token_ids", ids_t[order])
        object.__setattr__(self, "value_index", value_index[order])
        object.__setattr__(self, "vocab_size", vocab_size)

    def __len__(self) -> int:
        """N, the number of distinct values (the kernel's size)."""
        return int(self.values.numel())

    @classmethod
    def from_tokenizer(cls, tokenizer: TokenizerLike, max_value: int = 999) -> NumericVocab:
        """Integers 0..max_value that the tokenizer encodes as exactly one token (official code)."""
        max_value = check_int("max_value", max_value, 0)
        found = {}
        for v in range(max_value + 1):
            ids = tokenizer.encode(str(v), add_special_tokens=False)
            if len(ids) == 1:
                found[v] = ids[0]
        if not found:
            raise fail(
                "tokenizer", type(tokenizer).__name__, f"a tokenizer with single-token integers in 0..{max_value}"
            )
        return cls(list(found), list(found.values()), int(tokenizer.vocab_size))

    @classmethod
    def from_token_strings(cls, tokens: Sequence[str]) -> NumericVocab:
        """Algorithm 1: every vocabulary token that parses as a number joins V_num (ids = positions).

        Tokens that parse to the same value ("3", "Ġ3", "▁3", a full-width "３", "03") all join, carrying it.
        """
        parsed = [(i, _parse_number(t)) for i, t in enumerate(tokens)]
        pairs = [(i, v) for i, v in parsed if v is not None]
        if not pairs:
            raise fail("tokens", list(tokens)[:10], "a vocabulary with at least one numeric token")
        return cls([v for _, v in pairs], [i for i, _ in pairs], len(tokens))

    def lookup(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(is_numeric (V,) bool, index (V,) long)``: membership in V_num and pi(token), the index of the
        token's value (0 elsewhere)."""
        is_numeric = torch.zeros(self.vocab_size, dtype=torch.bool)
        index = torch.zeros(self.vocab_size, dtype=torch.long)
        is_numeric[self.token_ids] = True
        index[self.token_ids] = self.value_index
        return is_numeric, index

    def value_probabilities(self, logits: torch.Tensor) -> torch.Tensor:
        """p (..., N): softmax over the numeric tokens of ``logits`` (..., V), summed per value (Sec. 3.2).

        Computed in the logits' dtype (at least float32). With one token per value this is the paper's
        ``softmax(l[V_num])``; tokens sharing a value pool their probability, as they name the same number.
        """
        numeric = logits[..., self.token_ids]
        p_tokens = torch.softmax(numeric.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
        if len(self) == self.token_ids.numel():
            return p_tokens
        p = p_tokens.new_zeros((*p_tokens.shape[:-1], len(self)))
        return p.index_add_(-1, self.value_index.to(p_tokens.device), p_tokens)
