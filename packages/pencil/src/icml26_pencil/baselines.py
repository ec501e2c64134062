"""What PENCIL is compared against: the CN / Adamic-Adar / resource-allocation / Katz heuristics (no
training), and GCN link predictors (a ``GCNConv`` with PyTorch Geometric's semantics, tested against it),
featureless or with learnable node-ID embeddings (the ID-embedding family whose parameter count grows with
the graph)."""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_int, check_open_interval, check_positive, derive, fail
from torch import nn

from .data import Graph, check_edges, sample_non_edges

KATZ_BETA = 0.005  # official heuristics.py


def _pairs(graph: Graph, pairs) -> tuple[np.ndarray, np.ndarray]:
    pairs = check_edges(pairs, graph.num_nodes, name="pairs", allow_self_loops=True)
    return pairs[:, 0], pairs[:, 1]


def _weighted_common(graph: Graph, pairs, weight: np.ndarray) -> np.ndarray:
    """sum over w in N(u) & N(v) of weight[w], for each pair (u, v)."""
    u, v = _pairs(graph, pairs)
    A = graph.adjacency()
    return np.asarray(A[u].multiply(A[v]) @ weight).ravel()


def common_neighbors(graph: Graph, pairs) -> np.ndarray:
    """CN(u, v) = |N(u) & N(v)|."""
    return _weighted_common(graph, pairs, np.ones(graph.num_nodes))


def adamic_adar(graph: Graph, pairs) -> np.ndarray:
    """AA(u, v) = sum_{w in N(u) & N(v)} 1 / log deg(w) (a common neighbour has deg >= 2)."""
    deg = graph.degree.astype(float)
    weight = np.divide(1.0, np.log(deg, where=deg > 1, out=np.ones_like(deg)), where=deg > 1, out=np.zeros_like(deg))
    return _weighted_common(graph, pairs, weight)


def resource_allocation(graph: Graph, pairs) -> np.ndarray:
    """RA(u, v) = sum_{w in N(u) & N(v)} 1 / deg(w)."""
    deg = graph.degree.astype(float)
    return _weighted_common(graph, pairs, np.divide(1.0, deg, where=deg > 0, out=np.zeros_like(deg)))


def katz(graph: Graph, pairs, beta: float = KATZ_BETA, tol: float = 1e-12, max_terms: int = 200) -> np.ndarray:
    """Katz(u, v) = [(I - beta A)^{-1} - I]_{uv} = sum_{l >= 1} beta^l (A^l)_{uv}, summed on the columns of
    the queried sources until a term is below ``tol``; needs beta < 1 / lambda_max(A) to converge."""
    check_open_interval("beta", beta, 0.0, 1.0)
    check_positive("tol", tol)
    u, v = _pairs(graph, pairs)
    sources, col = np.unique(u, return_inverse=True)
    A = graph.adjacency()
    term = np.zeros((graph.num_nodes, len(sources)))
    term[sources, np.arange(len(sources))] = 1.0
    total = np.zeros_like(term)
    for _ in range(max_terms):
        term = beta * (A @ term)
        total += term
        if np.abs(term).max() < tol:
            return total[v, col]
    raise fail("beta", beta, f"a value below 1 / lambda_max(A) so that the Katz series converges in {max_terms} terms")


HEURISTICS = {"cn": common_neighbors, "aa": adamic_adar, "ra": resource_allocation, "katz": katz}


def gcn_adjacency(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """The sparse (n, n) propagation matrix of PyG's ``gcn_norm``: D^-1/2 (A + I) D^-1/2 over the directed
    edges ``edge_index`` (2, E) (both directions of an undirected graph) plus one self-loop per node."""
    loops = torch.arange(num_nodes)
    src = torch.cat([edge_index[0], loops])
    dst = torch.cat([edge_index[1], loops])
    deg = torch.zeros(num_nodes).index_add_(0, dst, torch.ones(len(dst)))
    w = deg[src].rsqrt() * deg[dst].rsqrt()
    adj = torch.sparse_coo_tensor(torch.stack([dst, src]), w, (num_nodes, num_nodes), check_invariants=False)
    return adj.coalesce()


class GCNConv(nn.Module):
    """Graph convolution X' = Â X W + b with Â = ``gcn_adjacency`` (PyG ``GCNConv`` defaults: glorot W,
    zero bias, self-loops, symmetric normalisation), on a precomputed Â."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        nn.init.xavier_uniform_(self.lin.weight)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        return torch.sparse.mm(adj, self.lin(x)) + self.bias


class GCNLinkPredictor(nn.Module):
    """GCN encoder + MLP predictor on h_u * h_v (the official GNN baseline: residual GCN layers, 2-layer
    predictor). ``num_nodes=None`` is featureless (every node starts from one shared learned vector, so no
    node can be told apart except by structure); ``num_nodes=n`` gives each node a learned ID embedding."""

    def __init__(self, hidden: int = 512, num_layers: int = 1, num_nodes: int | None = None) -> None:
        super().__init__()
        check_int("hidden", hidden, 1)
        check_int("num_layers", num_layers, 1)
        if num_nodes is None:
            self.embedding = nn.Parameter(torch.randn(1, hidden) * 0.1)
        else:
            self.embedding = nn.Parameter(torch.randn(check_int("num_nodes", num_nodes, 1), hidden) * 0.1)
        self.convs = nn.ModuleList(GCNConv(hidden, hidden) for _ in range(num_layers))
        self.predictor = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def embed(self, adj: torch.Tensor) -> torch.Tensor:
        """Node representations (n, hidden) given the propagation matrix ``adj = gcn_adjacency(...)`` (n, n)."""
        num_nodes = adj.shape[0]
        if self.embedding.shape[0] not in (1, num_nodes):
            raise fail("num_nodes", num_nodes, f"the {self.embedding.shape[0]} nodes the ID embedding was built for")
        h = self.embedding.expand(num_nodes, -1)
        for conv in self.convs:
            h = h + torch.relu(conv(h, adj))  # residual GCN layer
        return h

    def forward(self, adj: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        h = self.embed(adj)
        return self.predictor(h[pairs[:, 0]] * h[pairs[:, 1]]).squeeze(-1)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def edge_index(graph: Graph) -> torch.Tensor:
    """Both directions of every edge, (2, 2m), as PyG expects."""
    src = np.repeat(np.arange(graph.num_nodes), graph.degree)
    return torch.from_numpy(np.stack([src, graph.indices]))


def train_gcn(
    model: GCNLinkPredictor,
    graph: Graph,
    epochs: int,
    lr: float,
    seed: int,
    pairs: np.ndarray | None = None,
    targets: np.ndarray | None = None,
    batch_size: int = 1024,
) -> list[float]:
    """Adam on ``graph``: BCE on its edges vs uniform negatives resampled each epoch, or, given ``pairs``
    and ``targets``, MSE regression of the targets. Mean loss per epoch."""
    check_int("epochs", epochs, 1)
    check_positive("lr", lr)
    adj = gcn_adjacency(edge_index(graph), graph.num_nodes)  # once per graph, not per step
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    regression = pairs is not None
    loss_fn = nn.MSELoss() if regression else nn.BCEWithLogitsLoss()
    history = []
    model.train()
    for epoch in range(epochs):
        rng = np.random.default_rng(derive(seed, "gcn-epoch", epoch))
        if regression:
            P, y = pairs, np.asarray(targets, dtype=np.float64)
        else:
            pos = graph.edges()
            neg = sample_non_edges(graph, len(pos), rng)
            P, y = np.concatenate([pos, neg]), np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
        order = rng.permutation(len(P))
        losses = []
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            loss = loss_fn(model(adj, torch.from_numpy(P[idx])), torch.as_tensor(y[idx]).float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        history.append(float(np.mean(losses)))
    model.eval()
    return history


@torch.no_grad()
def predict_gcn(model: GCNLinkPredictor, graph: Graph, pairs) -> np.ndarray:
    """Scores (P,) of ``pairs`` (P, 2) with message passing on ``graph``."""
    pairs = check_edges(pairs, graph.num_nodes, name="pairs", allow_self_loops=True)
    model.eval()
    return model(gcn_adjacency(edge_index(graph), graph.num_nodes), torch.from_numpy(pairs)).numpy().astype(np.float64)
