"""Pruning baselines at the same per-CAV budget k = ceil(rho N): random, FastV-style attention, diversity.

(Dense cooperation and ego-only are keep masks of all ones / zeros in the experiment.)
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, fail

from .method import keep_count, select_tokens
from .model import N_QUESTION_TOKENS


def random_select(shape: tuple[int, ...], keep_ratio: float, generator: torch.Generator) -> torch.Tensor:
    """Uniformly random k of N tokens per row (bool mask of ``shape`` (..., N))."""
    return select_tokens(torch.rand(shape, generator=generator), keep_ratio)


def fastv_scores(attentions: list[torch.Tensor], layer: int, n_agents: int) -> torch.Tensor:
    """FastV (Chen et al., 2024): attention each visual token receives from the last instruction token (here the
    answer token) in layer K of a dense pass, mean over heads -> (b, n_agents, N)."""
    check_int("layer", layer, 0, len(attentions) - 1)
    received = attentions[layer][:, :, 0, N_QUESTION_TOKENS:].mean(1)
    return received.view(received.shape[0], n_agents, -1)


def diversity_select(features: torch.Tensor, keep_ratio: float) -> torch.Tensor:
    """Max-min diversity (DivPrune / farthest-point sampling, as in Prune2Drive) on cosine distance between token
    features (..., N, d): start from the largest-norm token [INF], then add the token farthest from the kept set."""
    if features.dim() < 2 or not torch.isfinite(features).all():
        raise fail("features", tuple(features.shape), "finite features (..., N, d)")
    flat = features.reshape(-1, *features.shape[-2:])
    k = keep_count(keep_ratio, flat.shape[1])
    unit = torch.nn.functional.normalize(flat, dim=-1)
    distance = 1 - unit @ unit.transpose(1, 2)  # (B, N, N) cosine distance
    rows = torch.arange(flat.shape[0])
    mask = torch.zeros(flat.shape[:2], dtype=torch.bool)
    chosen = flat.norm(dim=-1).argmax(-1)
    nearest = torch.full(flat.shape[:2], float("inf"))
    for _ in range(k):
        mask[rows, chosen] = True
        nearest = torch.minimum(nearest, distance[rows, chosen])
        chosen = nearest.masked_fill(mask, -1.0).argmax(-1)
    return mask.view(features.shape[:-1])
