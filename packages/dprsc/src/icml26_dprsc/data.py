"""Graphs with integer vertex attributes in [0, U)^d, and random query boxes.

* ``sbm_graph`` / ``powerlaw_cluster_graph``: networkx generators; attributes drawn around one random
  centre per community (SBM blocks, or Louvain communities of the power-law cluster graph), so that
  boxes select dense parts of the graph, as attribute ranges do in practice ([INF], ours).
* ``planetoid_graph``: Cora / CiteSeer citation graphs (``icml26_shared.load_planetoid``: checksum-verified
  Planetoid files, decoded once). Attributes: the top-d principal components of the bag-of-words
  features, each cut into U equal-frequency bins ([INF], ours).
* ``random_boxes``: Q axis-parallel boxes of varied volume holding at least a fraction of the vertices.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from icml26_shared import (
    cached,
    check_choice,
    check_closed_interval,
    check_int,
    check_open_interval,
    check_positive,
    fail,
    load_planetoid,
)

PLANETOID_NAMES = ("cora", "citeseer")
PCA_COMPONENTS = 4  # stored once per dataset; d <= 4 attribute dimensions


def community_attributes(labels: np.ndarray, d: int, U: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    """Integer attributes (n, d): a uniform centre per community + N(0, (spread U)^2), rounded, clipped to [0, U)."""
    d = check_int("d", d, 1)
    spread = check_positive("spread", spread)
    centres = rng.uniform(0, U, size=(int(labels.max()) + 1, d))
    values = centres[labels] + rng.normal(0.0, spread * U, size=(len(labels), d))
    return np.clip(np.round(values), 0, U - 1).astype(np.int64)


def sbm_graph(
    n: int, blocks: int, p_in: float, p_out: float, d: int, U: int, spread: float = 0.1, seed: int = 0
) -> tuple[nx.Graph, np.ndarray]:
    """A stochastic block model with ``blocks`` equal blocks and community-correlated attributes."""
    n, blocks = check_int("n", n, 3), check_int("blocks", blocks, 1, n)
    p_in, p_out = check_open_interval("p_in", p_in, 0, 1), check_open_interval("p_out", p_out, 0, 1)
    sizes = [n // blocks + (i < n % blocks) for i in range(blocks)]
    probs = np.full((blocks, blocks), p_out) + np.eye(blocks) * (p_in - p_out)
    G = nx.Graph(nx.stochastic_block_model(sizes, probs.tolist(), seed=seed))
    labels = np.repeat(np.arange(blocks), sizes)
    return G, community_attributes(labels, d, U, spread, np.random.default_rng(seed))


def powerlaw_cluster_graph(
    n: int, m: int, p: float, d: int, U: int, spread: float = 0.1, seed: int = 0
) -> tuple[nx.Graph, np.ndarray]:
    """Holme-Kim power-law cluster graph; attributes around its Louvain communities."""
    n, m, p = check_int("n", n, 3), check_int("m", m, 1, n - 1), check_closed_interval("p", p, 0.0, 1.0)
    G = nx.powerlaw_cluster_graph(n, m, p, seed=seed)
    labels = np.zeros(n, dtype=np.int64)
    for i, community in enumerate(nx.community.louvain_communities(G, seed=seed)):
        labels[list(community)] = i
    return G, community_attributes(labels, d, U, spread, np.random.default_rng(seed))


def _planetoid_scores(name: str) -> dict[str, np.ndarray]:
    """Edges (m, 2) and the top PCA_COMPONENTS principal-component scores (n, PCA_COMPONENTS) of the features."""
    graph = load_planetoid(name)
    centred = graph.features.astype(np.float64) - graph.features.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return {"edges": graph.edges, "scores": centred @ vt[:PCA_COMPONENTS].T}


def planetoid_graph(name: str, d: int, U: int) -> tuple[nx.Graph, np.ndarray]:
    """Cora or CiteSeer as a simple graph (self-loops and duplicate edges of the raw files removed)."""
    check_choice("name", name, PLANETOID_NAMES)
    d = check_int("d", d, 1, PCA_COMPONENTS)
    arrays = cached(f"dprsc/planetoid-{name}-pca-v2", lambda: _planetoid_scores(name))
    scores = arrays["scores"][:, :d]
    G = nx.Graph()
    G.add_nodes_from(range(len(scores)))
    G.add_edges_from(arrays["edges"].tolist())
    ranks = scores.argsort(axis=0, kind="stable").argsort(axis=0, kind="stable")
    return G, (ranks * U // len(scores)).astype(np.int64)


def random_boxes(
    X: np.ndarray, U: int, Q: int, min_fraction: float, rng: np.random.Generator, max_tries: int = 100_000
) -> tuple[np.ndarray, np.ndarray]:
    """Q boxes (lo, hi), each (Q, d): per axis two uniform corners, kept if >= min_fraction of vertices lie inside."""
    Q = check_int("Q", Q, 1)
    min_fraction = check_open_interval("min_fraction", min_fraction, 0.0, 1.0)
    lo, hi = [], []
    for _ in range(max_tries):
        corners = np.sort(rng.integers(0, U, size=(2, X.shape[1])), axis=0)
        if ((X >= corners[0]) & (X <= corners[1])).all(axis=1).mean() >= min_fraction:
            lo.append(corners[0])
            hi.append(corners[1])
            if len(lo) == Q:
                return np.array(lo), np.array(hi)
    raise fail("min_fraction", min_fraction, f"a fraction that {Q} random boxes reach within {max_tries} tries")
