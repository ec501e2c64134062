"""The model that is pre-trained and then fine-tuned: a residual MLP whose Linear layers are the groups."""

from __future__ import annotations

import torch
from icml26_shared import check_int
from torch import nn


class ResidualMLP(nn.Module):
    """``h = W_in x``; ``h <- h + W_2 relu(W_1 h)`` per block; logits ``W_out relu(h)``.

    With ``depth`` blocks it has G = 2 depth + 2 Linear layers: one parameter group each.
    """

    def __init__(self, in_dim: int, out_dim: int, width: int = 128, depth: int = 4) -> None:
        super().__init__()
        self.in_dim = check_int("in_dim", in_dim, 1)
        check_int("out_dim", out_dim, 1)
        self.embed = nn.Linear(in_dim, check_int("width", width, 1))
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
            for _ in range(check_int("depth", depth, 1))
        )
        self.head = nn.Linear(width, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.in_dim:
            raise ValueError(f"x.shape={tuple(x.shape)}: expected (batch, {self.in_dim})")
        h = self.embed(x)
        for block in self.blocks:
            h = h + block(h)
        return self.head(torch.relu(h))
