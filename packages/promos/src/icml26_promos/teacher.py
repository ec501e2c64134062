"""The frozen self-supervised teacher: a 2-layer GCN trained with GRACE (Zhu et al., 2020).

The paper distils from a GCA checkpoint (GCA = GRACE with adaptive augmentation); the checkpoint and its
embedding script are not public, so we train GRACE in-repo on the unlabeled source graphs ([INF], the spec's
stand-in). GRACE: two views by random edge dropping and feature-column masking, a shared GCN encoder, a
projection head, and the symmetric NT-Xent loss with intra- and inter-view negatives (GRACE eq. (1)-(2)).
"""

from __future__ import annotations

import weakref

import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_positive, fail
from torch import nn
from torch_geometric.nn import GCNConv
from torch_geometric.utils import dropout_edge

from .data import Graph


def graph_tensors(graph: Graph) -> tuple[torch.Tensor, torch.Tensor]:
    """(x (n, f) float32, edge_index (2, m) int64) as torch tensors."""
    return torch.from_numpy(graph.x), torch.from_numpy(graph.edge_index)


class GCNEncoder(nn.Module):
    """Two GCN layers with ReLU after each (GRACE's encoder): (n, d) -> (n, out_dim)."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int):
        super().__init__()
        self.conv1, self.conv2 = GCNConv(in_dim, hidden), GCNConv(hidden, out_dim)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return F.relu(self.conv2(F.relu(self.conv1(x, edge_index)), edge_index))


def nt_xent(h1: torch.Tensor, h2: torch.Tensor, tau: float) -> torch.Tensor:
    """GRACE eq. (1): -log e^{s(u_i,v_i)/tau} / (sum_k e^{s(u_i,v_k)/tau} + sum_{k!=i} e^{s(u_i,u_k)/tau})."""
    h1, h2 = F.normalize(h1, dim=1), F.normalize(h2, dim=1)
    between = torch.exp(h1 @ h2.T / tau)
    within = torch.exp(h1 @ h1.T / tau)
    return -torch.log(between.diag() / (between.sum(1) + within.sum(1) - within.diag())).mean()


def mask_features(x: torch.Tensor, p: float) -> torch.Tensor:
    """Zero each feature column with probability p (GRACE's feature masking)."""
    return x * (torch.rand(x.shape[1]) >= p).to(x.dtype)


class Teacher:
    """A frozen GCN encoder: ``embed(graph)`` -> teacher embeddings t_v, (n, out_dim) float32.

    Frozen means deterministic, so embeddings are memoised per graph object (graphs are immutable).
    """

    def __init__(self, encoder: GCNEncoder):
        self.encoder = encoder.eval().requires_grad_(False)
        self._memo: weakref.WeakKeyDictionary[Graph, torch.Tensor] = weakref.WeakKeyDictionary()

    @torch.no_grad()
    def embed(self, graph: Graph) -> torch.Tensor:
        if graph not in self._memo:
            x, edge_index = graph_tensors(graph)
            if x.shape[1] != self.encoder.conv1.in_channels:
                raise fail("graph.x", graph.x, f"{self.encoder.conv1.in_channels} (aligned) feature columns")
            self._memo[graph] = self.encoder(x, edge_index)
        return self._memo[graph]


def train_teacher(
    graphs: list[Graph],
    out_dim: int = 64,
    hidden: int = 128,
    epochs: int = 100,
    lr: float = 1e-3,
    weight_decay: float = 1e-5,
    tau: float = 0.5,
    drop_edge: tuple[float, float] = (0.2, 0.4),
    drop_feature: tuple[float, float] = (0.3, 0.4),
    max_nodes: int = 1024,
    seed: int = 0,
) -> Teacher:
    """Train GRACE on the source graphs (one step per graph per epoch) and return the frozen encoder.

    The contrastive loss is computed on at most ``max_nodes`` random nodes per step (O(n^2) memory).
    Defaults follow GRACE's Cora setting, with 64-d outputs because ProMoS's adapter is 64 -> 64.
    """
    if not graphs:
        raise fail("graphs", graphs, "at least one source graph")
    dims = {g.x.shape[1] for g in graphs}
    if len(dims) != 1:
        raise fail("graphs", sorted(dims), "graphs with the same (aligned) feature dimension")
    epochs, max_nodes = check_int("epochs", epochs, 1), check_int("max_nodes", max_nodes, 2)
    lr, tau = check_positive("lr", lr), check_positive("tau", tau)
    torch.manual_seed(seed)
    encoder = GCNEncoder(dims.pop(), hidden, out_dim)
    head = nn.Sequential(nn.Linear(out_dim, out_dim), nn.ELU(), nn.Linear(out_dim, out_dim))
    params = [*encoder.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    tensors = [graph_tensors(g) for g in graphs]
    for _ in range(epochs):
        for x, edge_index in tensors:
            views = [
                head(encoder(mask_features(x, pf), dropout_edge(edge_index, p=pe)[0]))
                for pe, pf in zip(drop_edge, drop_feature, strict=True)
            ]
            keep = torch.randperm(len(x))[:max_nodes]
            h1, h2 = views[0][keep], views[1][keep]
            loss = 0.5 * (nt_xent(h1, h2, tau) + nt_xent(h2, h1, tau))  # GRACE eq. (2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return Teacher(encoder)
