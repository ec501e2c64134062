"""The dual-stream architecture [PUB, abstract]: an SPD sheaf stream beside a standard GNN stream.

[INF, ours] fusion: the Euclidean stream (GIN on atom features) parametrises the restriction maps of
each SPD sheaf layer from its features of the same depth; the readout concatenates the mean-pooled
Euclidean features with rotation-invariant SPD features (log-eigenvalues of the Log-Euclidean mean
and mean node log-eigenvalues, batch-normalised) and an MLP head maps them to the property.
"""

from __future__ import annotations

import torch
from icml26_shared import check_int, check_positive
from torch import nn
from torch_geometric.nn import global_mean_pool

from .baselines import EuclideanStream, mlp
from .method import SPDStream, check_batch, spd_readout


class DualStreamSheafNet(nn.Module):
    """SPD sheaf stream + GIN stream -> property (regression or logits).

    ``maps="identity"`` gives the "without sheaf maps" ablation; the "without SPD stream" ablation is
    ``baselines.GNN(conv="gin")``. Defaults [INF, ours]: hidden 32, 4 SPD channels of 3 x 3, eps 1e-4.
    """

    def __init__(
        self,
        in_features: int,
        hidden: int = 32,
        channels: int = 4,
        depth: int = 2,
        out_dim: int = 1,
        maps: str = "orthogonal",
        eps: float = 1e-4,
        n: int = 3,
    ):
        super().__init__()
        self.channels, self.n = check_int("channels", channels, 1), check_int("n", n, 1)
        self.euclidean = EuclideanStream(in_features, hidden, depth, "gin")
        self.spd = SPDStream(hidden, channels, depth, n, maps, check_positive("eps", eps))
        spd_features = 2 * channels * n
        self.norm = nn.BatchNorm1d(spd_features)  # per-feature scale; keeps the spread of eigenvalues
        self.head = mlp([hidden + spd_features, hidden, check_int("out_dim", out_dim, 1)])

    def spd_features(self, data) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-coordinates of the SPD stream's output stalks (N, C, n, n), and the last GIN features (N, hidden)."""
        reverse = check_batch(data)
        h_layers = self.euclidean(data.x, data.edge_index)
        return self.spd(data.direction, h_layers, data.edge_index, reverse), h_layers[-1]

    def forward(self, data) -> torch.Tensor:
        s, h = self.spd_features(data)
        pooled = global_mean_pool(h, data.batch, size=data.num_graphs)
        invariants = self.norm(spd_readout(s, data.batch, data.num_graphs))
        return self.head(torch.cat([pooled, invariants], dim=-1))
