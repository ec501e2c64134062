"""Graphs and link splits: a validated CSR graph, the power-law cluster generator, Cora/CiteSeer, and
the standard random 85/5/10 edge split with uniform negatives (PyG ``RandomLinkSplit`` convention)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, check_open_interval, fail, load_planetoid


@dataclass(frozen=True)
class Graph:
    """An undirected simple graph in CSR form: the neighbours of node ``i`` are
    ``indices[indptr[i]:indptr[i + 1]]`` (sorted). Build it with ``Graph.from_edges``."""

    num_nodes: int
    indptr: np.ndarray
    indices: np.ndarray

    @classmethod
    def from_edges(cls, edges: np.ndarray, num_nodes: int) -> Graph:
        """From undirected ``edges`` (m, 2) over nodes ``0..num_nodes-1``; duplicates merged, self-loops refused."""
        num_nodes = check_int("num_nodes", num_nodes, 1)
        edges = check_edges(edges, num_nodes)
        both = np.concatenate([edges, edges[:, ::-1]])
        both = np.unique(both, axis=0)  # sorted by (src, dst): CSR order
        indptr = np.zeros(num_nodes + 1, dtype=np.int64)
        np.add.at(indptr, both[:, 0] + 1, 1)
        return cls(num_nodes, np.cumsum(indptr), both[:, 1].copy())

    @classmethod
    def from_networkx(cls, G) -> Graph:
        """From a networkx graph on the nodes 0..n-1 (undirected, no self-loops)."""
        if G.is_directed() or G.is_multigraph():
            raise fail("G", type(G).__name__, "an undirected simple graph (networkx Graph)")
        if set(G.nodes) != set(range(G.number_of_nodes())):
            raise fail("G", sorted(G.nodes)[:5], "nodes labelled 0..n-1 (use nx.convert_node_labels_to_integers)")
        return cls.from_edges(np.array(list(G.edges()), dtype=np.int64).reshape(-1, 2), G.number_of_nodes())

    @property
    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    @property
    def num_edges(self) -> int:
        return len(self.indices) // 2

    def neighbors(self, i: int) -> np.ndarray:
        return self.indices[self.indptr[i] : self.indptr[i + 1]]

    def edges(self) -> np.ndarray:
        """Undirected edges (m, 2) with u < v."""
        src = np.repeat(np.arange(self.num_nodes), self.degree)
        keep = src < self.indices
        return np.stack([src[keep], self.indices[keep]], axis=1)

    def adjacency(self):
        """The (n, n) scipy CSR adjacency matrix with unit weights."""
        from scipy.sparse import csr_matrix

        data = np.ones(len(self.indices))
        return csr_matrix((data, self.indices, self.indptr), shape=(self.num_nodes, self.num_nodes))


def check_edges(edges, num_nodes: int, name: str = "edges", allow_self_loops: bool = False) -> np.ndarray:
    """A non-empty integer array (m, 2) of node ids in ``[0, num_nodes)``; returned as int64."""
    arr = check_array(name, edges, ndim=2)
    if arr.shape[1] != 2:
        raise fail(name, arr, "an array of shape (m, 2)")
    if not np.issubdtype(arr.dtype, np.integer):
        raise fail(name, arr, "integer node ids")
    if arr.min() < 0 or arr.max() >= num_nodes:
        raise fail(name, arr, f"node ids in [0, {num_nodes}) (found {arr.min()}..{arr.max()})")
    if not allow_self_loops and (arr[:, 0] == arr[:, 1]).any():
        raise fail(name, arr, "no self-loops (u == v)")
    return arr.astype(np.int64)


def powerlaw_cluster_edges(n: int, m: int, p: float, seed: int) -> np.ndarray:
    """Holme-Kim power-law cluster graph (networkx): preferential attachment with triadic closure prob. ``p``."""
    import networkx as nx

    check_int("n", n, 2)
    check_int("m", m, 1, n - 1)
    check_open_interval("p", p, 0.0, 1.0)
    G = nx.powerlaw_cluster_graph(n, m, p, seed=seed)
    return np.array(sorted((min(u, v), max(u, v)) for u, v in G.edges()), dtype=np.int64)


def planetoid_edges(name: str) -> tuple[np.ndarray, int]:
    """Undirected edges (m, 2) and node count of Cora or CiteSeer (checksum-verified, via icml26-shared)."""
    data = load_planetoid(name)
    return data.edges, data.num_nodes


def sample_non_edges(
    graph: Graph, count: int, rng: np.random.Generator, exclude: np.ndarray | None = None
) -> np.ndarray:
    """``count`` distinct node pairs (u < v) drawn uniformly among the pairs that are not edges of ``graph``
    (nor in ``exclude``): the global uniform negatives of ``torch_geometric.utils.negative_sampling``."""
    count = check_int("count", count, 1)
    n = graph.num_nodes
    taken = graph.edges() @ np.array([n, 1])
    if exclude is not None:
        ex = check_edges(exclude, n, name="exclude")
        taken = np.concatenate([taken, np.minimum(ex[:, 0], ex[:, 1]) * n + np.maximum(ex[:, 0], ex[:, 1])])
    taken = np.unique(taken)
    if n * (n - 1) // 2 - len(taken) < count:
        raise fail("count", count, "at most the number of non-edges of the graph")
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < count:  # candidates in draw order; the first ``count`` distinct valid ones are kept
        u, v = rng.integers(0, n, size=(2, 2 * (count - len(keys)) + 16))
        cand = np.minimum(u, v) * n + np.maximum(u, v)
        cand = cand[(u != v) & ~np.isin(cand, taken) & ~np.isin(cand, keys)]
        _, first = np.unique(cand, return_index=True)
        cand = cand[np.sort(first)]
        keys = np.concatenate([keys, cand[: count - len(keys)]])
    return np.stack([keys // n, keys % n], axis=1)


@dataclass(frozen=True)
class LinkSplit:
    """A link-prediction split: the message-passing/training graph and held-out positive/negative pairs."""

    train: Graph  # graph of the training edges only (validation and test edges removed)
    val_pos: np.ndarray
    val_neg: np.ndarray
    test_pos: np.ndarray
    test_neg: np.ndarray


def split_edges(edges: np.ndarray, num_nodes: int, seed: int, val: float = 0.05, test: float = 0.1) -> LinkSplit:
    """Random 85/5/10 edge split (``RandomLinkSplit`` defaults of the Planetoid link benchmarks); validation
    and test negatives are uniform non-edges of the whole graph, as many as the positives."""
    graph = Graph.from_edges(edges, num_nodes)
    check_open_interval("val", val, 0.0, 1.0)
    check_open_interval("test", test, 0.0, 1.0 - val)
    rng = np.random.default_rng(seed)
    all_edges = graph.edges()
    perm = rng.permutation(len(all_edges))
    n_val, n_test = round(val * len(perm)), round(test * len(perm))
    if n_val < 1 or n_test < 1 or n_val + n_test >= len(perm):
        raise fail("edges", all_edges, "enough edges for non-empty train/val/test splits")
    val_pos, test_pos = all_edges[perm[:n_val]], all_edges[perm[n_val : n_val + n_test]]
    negatives = sample_non_edges(graph, n_val + n_test, rng)
    train = Graph.from_edges(all_edges[perm[n_val + n_test :]], num_nodes)
    return LinkSplit(train, val_pos, negatives[:n_val], test_pos, negatives[n_val:])
