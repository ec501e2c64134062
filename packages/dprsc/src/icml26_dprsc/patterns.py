"""Pattern graphs H and their occurrences in a host graph G (the input side of the subgraph projection).

An *occurrence* of H is a subgraph of G isomorphic to H (not necessarily induced). It is stored as one
row of vertex ids, column j holding the image of H's j-th vertex, so that H's edges are column pairs.
Alongside the enumeration this module gives the edge-level sensitivity facts the release needs:

* ``pair_counts``: how many occurrences use each host edge as an H-edge (what one edge toggle changes);
* ``sensitivity_statistic`` / ``sensitivity_bound``: a statistic s(G) of global sensitivity 1 and a
  monotone map tau(s) with LS_H(G) <= tau(s(G)), where LS_H(G) = max_{u != v} #occurrences of H that
  use {u, v} as an edge in G + {u, v} (the local sensitivity of the occurrence multiset).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
from icml26_shared import check_int, fail

MAX_PATTERN_VERTICES = 5  # generic enumeration is exponential in |V(H)|
MAX_OCCURRENCES = 20_000_000  # a hard stop before the occurrence array outgrows memory


@dataclass(frozen=True)
class Pattern:
    """A connected pattern graph H on vertices 0..k-1; ``kind`` selects a fast enumerator."""

    name: str
    k: int  # |V(H)|
    edges: tuple[tuple[int, int], ...]  # H's edges as column pairs of an occurrence row
    kind: str  # "triangle", "star" or "generic"


def triangle() -> Pattern:
    """H = K3."""
    return Pattern("triangle", 3, ((0, 1), (0, 2), (1, 2)), "triangle")


def star(k: int) -> Pattern:
    """H = the k-star K_{1,k}: column 0 is the centre, columns 1..k the leaves."""
    k = check_int("k", k, 1, MAX_PATTERN_VERTICES - 1)
    return Pattern(f"{k}-star", k + 1, tuple((0, j) for j in range(1, k + 1)), "star")


def from_graph(H: nx.Graph, name: str = "H") -> Pattern:
    """Any small connected simple graph H (enumerated by subgraph monomorphism)."""
    check_simple_graph("H", H)
    if not 2 <= H.number_of_nodes() <= MAX_PATTERN_VERTICES or not nx.is_connected(H):
        raise fail("H", H, f"a connected graph with 2..{MAX_PATTERN_VERTICES} vertices")
    H = nx.convert_node_labels_to_integers(H)
    return Pattern(name, H.number_of_nodes(), tuple(sorted((min(e), max(e)) for e in H.edges)), "generic")


def check_simple_graph(name: str, G: nx.Graph) -> nx.Graph:
    """An undirected simple graph: no direction, no multi-edges, no self-loops."""
    if not isinstance(G, nx.Graph):
        raise fail(name, G, "a networkx.Graph")
    if G.is_directed():
        raise fail(name, G, "an undirected graph (edge-level DP here is for undirected edges)")
    if G.is_multigraph():
        raise fail(name, G, "a simple graph without multi-edges")
    loops = nx.number_of_selfloops(G)
    if loops:
        raise fail(name, G, f"a graph without self-loops (found {loops})")
    return G


def check_host_graph(G: nx.Graph) -> int:
    """A simple undirected host graph whose nodes are exactly 0..n-1; returns n."""
    check_simple_graph("G", G)
    n = G.number_of_nodes()
    if n < 3 or set(G.nodes) != set(range(n)):
        raise fail("G", G, "nodes labelled 0..n-1 with n >= 3 (use nx.convert_node_labels_to_integers)")
    return n


def occurrences(G: nx.Graph, pattern: Pattern) -> np.ndarray:
    """All occurrences of ``pattern`` in ``G`` as an int64 array (m, k), one row per distinct subgraph."""
    check_host_graph(G)
    if pattern.kind == "triangle":
        rows = _triangles(G)
    elif pattern.kind == "star":
        rows = _stars(G, pattern.k - 1)
    else:
        rows = _generic(G, pattern)
    return np.asarray(rows, dtype=np.int64).reshape(-1, pattern.k)


def _triangles(G: nx.Graph) -> list[tuple[int, int, int]]:
    """Each triangle once, as u < v < w, by intersecting forward neighbourhoods."""
    forward = {u: {v for v in G[u] if v > u} for u in G}
    return [(u, v, w) for u in G for v in forward[u] for w in forward[u] & forward[v]]


def _stars(G: nx.Graph, k: int) -> list[tuple[int, ...]]:
    """Each k-star once: a centre and an unordered k-set of its neighbours (for k = 1: each edge once)."""
    total = sum(math.comb(d, k) for _, d in G.degree())
    if total > MAX_OCCURRENCES:
        raise fail("pattern", f"{k}-star", f"at most {MAX_OCCURRENCES} occurrences, G has {total}")
    if k == 1:
        return [(min(e), max(e)) for e in G.edges]
    return [(c, *leaves) for c in G for leaves in itertools.combinations(sorted(G[c]), k)]


def _generic(G: nx.Graph, pattern: Pattern) -> list[tuple[int, ...]]:
    """Occurrences by subgraph monomorphism, deduplicated by their edge set (removes H's automorphisms)."""
    H = nx.Graph(pattern.edges)
    seen: dict[frozenset, tuple[int, ...]] = {}
    for mapping in nx.algorithms.isomorphism.GraphMatcher(G, H).subgraph_monomorphisms_iter():
        image = {h: g for g, h in mapping.items()}
        key = frozenset(frozenset((image[a], image[b])) for a, b in pattern.edges)
        seen.setdefault(key, tuple(image[j] for j in range(pattern.k)))
        if len(seen) > MAX_OCCURRENCES:
            raise fail("pattern", pattern.name, f"at most {MAX_OCCURRENCES} occurrences")
    return list(seen.values())


def pair_keys(occ: np.ndarray, pattern: Pattern, n: int) -> np.ndarray:
    """(m, |E(H)|) keys min*n+max of the host edge that realises each H-edge of each occurrence."""
    cols = np.asarray(pattern.edges)
    a, b = occ[:, cols[:, 0]], occ[:, cols[:, 1]]
    return np.minimum(a, b) * n + np.maximum(a, b)


def pair_counts(occ: np.ndarray, pattern: Pattern, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, counts): for each host edge used by some occurrence, how many occurrences use it."""
    keys, counts = np.unique(pair_keys(occ, pattern, n), return_counts=True)
    return keys, counts


def sensitivity_statistic(G: nx.Graph, pattern: Pattern) -> int:
    """s(G), with |s(G) - s(G')| <= 1 for graphs differing in one edge.

    Triangles: the maximum co-degree max_{u != v} |N(u) & N(v)| (a toggle of xy moves only N(x), N(y)
    by one element). Other patterns: the maximum degree.
    """
    n = check_host_graph(G)
    return adjacency_statistic(nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr", dtype=np.int64), pattern)


def adjacency_statistic(A: sp.csr_array, pattern: Pattern) -> int:
    """s(G) computed from a 0/1 sparse adjacency matrix (n, n) of G."""
    if A.shape[0] == 0:
        return 0
    if pattern.kind != "triangle":
        return int(A.sum(axis=1).max())
    codegree = sp.csr_array(A @ A)  # entry (u, v) = |N(u) & N(v)|; the diagonal holds degrees
    rows = np.repeat(np.arange(codegree.shape[0]), np.diff(codegree.indptr))
    off_diagonal = codegree.data[codegree.indices != rows]
    return int(off_diagonal.max()) if off_diagonal.size else 0


def sensitivity_bound(pattern: Pattern, s: float) -> float:
    """tau(s): an upper bound on LS_H(G) given s(G) <= s, non-decreasing in s.

    * triangle: #triangles through {u, v} in G + uv is |N(u) & N(v)| <= s;
    * k-star: centre u with leaf v, or centre v with leaf u: C(d'(u)-1, k-1) + C(d'(v)-1, k-1), where
      d' <= s + 1 is the degree after adding uv; for k = 1 the occurrence is the edge itself;
    * generic H: fix the H-edge and orientation mapped onto uv (2|E(H)| ways), then place the other
      k-2 vertices along a BFS order of H, each a neighbour of a placed vertex: <= (s+1)^(k-2).
    """
    s = max(float(s), 0.0)
    if pattern.kind == "triangle":
        return s
    if pattern.kind == "star":
        leaves = pattern.k - 1
        return 1.0 if leaves == 1 else 2.0 * math.comb(math.ceil(s), leaves - 1)
    return 2.0 * len(pattern.edges) * (s + 1.0) ** (pattern.k - 2)


def global_sensitivity(pattern: Pattern, n: int) -> float:
    """GS of the occurrence count under edge-level DP on n vertices (the per-query baseline's scale)."""
    n = check_int("n", n, 3)
    if pattern.kind == "triangle":
        return float(n - 2)
    return sensitivity_bound(pattern, n - 2)
