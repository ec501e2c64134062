"""Pruning a transformers decoder-only LM (SmolLM2-135M-Instruct) with the block-by-block procedure.

``prune_lm`` captures the inputs of the first decoder block (Wanda's ``prepare_calibration_input``), computes
the dense statistics when the allocation needs them, and prunes every Linear of every decoder block; the
embedding and the tied output head are not pruned (as in Wanda). The held-out metric is
``icml26_shared.llm.perplexity``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from icml26_shared import fail
from torch import nn

from .allocation import ALLOCATIONS, OWL_LAMBDA, allocate
from .metric import WANDA, Metric
from .pruning import PruneResult, dense_statistics, prune_blocks


class _Captured(Exception):
    pass


_STATE = ("hidden_states", "past_key_values", "past_key_value", "cache", "use_cache")  # not a block's arguments


def decoder_blocks(model: nn.Module) -> nn.ModuleList:
    """The decoder blocks of a Llama-style transformers model (``model.model.layers``)."""
    try:
        return model.model.layers
    except AttributeError:
        raise fail("model", type(model).__name__, "a Llama-style causal LM with model.model.layers") from None


def check_tokens(name: str, tokens: Any) -> torch.Tensor:
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2 or tokens.numel() == 0:
        raise fail(name, getattr(tokens, "shape", tokens), "a non-empty (sequences, tokens) tensor of token ids")
    return tokens


@torch.no_grad()
def block_inputs(model: nn.Module, tokens: torch.Tensor) -> tuple[torch.Tensor, list[dict[str, Any]]]:
    """The hidden states entering block 0 for ``tokens`` and, per block, the keyword arguments it receives.

    Per block because they differ between blocks in some models: Gemma-3 gives its sliding-window layers a local
    attention mask and rotary embedding and every sixth layer the global ones. The blocks' ``forward`` is replaced
    by a recorder for this one call (the model's own loop then builds every block's arguments without running any
    block), and the last block's recorder stops the forward.
    """
    check_tokens("tokens", tokens)
    blocks = decoder_blocks(model)
    seen: list[tuple[tuple, dict[str, Any]]] = []

    def recorder(last: bool) -> Any:
        def record(*args: Any, **kwargs: Any) -> torch.Tensor:
            hidden = args[0] if args else kwargs["hidden_states"]
            seen.append((hidden, {k: v for k, v in kwargs.items() if k not in _STATE}))
            if last:
                raise _Captured
            return hidden

        return record

    for index, block in enumerate(blocks):
        block.forward = recorder(index == len(blocks) - 1)
    try:
        model(input_ids=tokens, use_cache=False)
    except _Captured:
        pass
    finally:
        for block in blocks:
            del block.forward  # the class's forward again
    return seen[0][0], [kwargs for _, kwargs in seen]


def prune_lm(
    model: nn.Module,
    calibration: torch.Tensor,
    sparsity: float,
    metric: Metric = WANDA,
    allocation: str = "uniform",
    pattern: tuple[int, int] | None = None,
    group: str = "row",
    lam: float = OWL_LAMBDA,
) -> PruneResult:
    """Prune every Linear of ``model``'s decoder blocks in place at mean sparsity ``sparsity``.

    ``calibration``: (sequences, tokens) token ids. ``allocation``: ``uniform | owl | sdsa``. Magnitude pruning
    is ``metric=MAGNITUDE, group="layer"``; Wanda is the default ``metric=WANDA, group="row"``.
    """
    if allocation not in ALLOCATIONS:
        raise fail("allocation", allocation, f"one of {list(ALLOCATIONS)}")
    blocks = decoder_blocks(model)
    hidden, kwargs = block_inputs(model, check_tokens("calibration", calibration))
    if allocation == "uniform" or pattern is not None:
        sparsities: Sequence[float] = [sparsity] * len(blocks)
    else:
        sparsities = allocate(allocation, dense_statistics(blocks, hidden, kwargs), sparsity, lam=lam)
    return prune_blocks(blocks, hidden, sparsities, metric, group=group, pattern=pattern, block_kwargs=kwargs)
