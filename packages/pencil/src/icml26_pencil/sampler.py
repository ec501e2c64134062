"""PENCIL's input pipeline: the ShaDow-style 2-hop ego sampler around a candidate link (u, v), local node
IDs, and the "adjacency_row" token scheme with two task tokens, batched with padding masks.

Token layout (one row per subgraph node, ``M = max_num_nodes`` is the ID vocabulary)::

    [ onehot(ID) (M) | adjacency row over IDs (M) | is_node | is_task ]      width 2M + 2

followed by two task tokens: copies of u's and v's ``[onehot | adjacency row]`` with is_node=0, is_task=1.
Node tokens sit at the position equal to their ID, so the adjacency read from the tokens indexes positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_int, fail

from .data import Graph, check_edges


@dataclass(frozen=True)
class Subgraph:
    """A sampled subgraph around the query (u, v): global ``nodes`` (n,) with ``nodes[0] = u`` and
    ``nodes[1] = v`` and local undirected ``edges`` (e, 2) between positions of ``nodes``. For a self
    pair (``self_pair``, u == v) u is listed once and ``nodes[1]`` is another node."""

    nodes: np.ndarray
    edges: np.ndarray
    self_pair: bool = False


def ego_subgraph(
    graph: Graph,
    u: int,
    v: int,
    depth: int,
    num_neighbors: int,
    rng: np.random.Generator,
    remove_target: bool,
) -> Subgraph:
    """ShaDow k-hop ego sampling from the seeds {u, v}: per hop, every frontier node keeps ``num_neighbors``
    of its neighbours drawn without replacement (all of them if fewer); the result is the subgraph
    induced on the union of the sampled nodes. ``remove_target`` drops the edge (u, v) (training: no
    leakage of the label into the input)."""
    return _sample(graph, np.array([[u, v]], dtype=np.int64), depth, num_neighbors, rng, remove_target)[0]


def _gather(graph: Graph, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The concatenated neighbour lists of ``nodes`` and, for each entry, the index of its node."""
    deg = graph.degree[nodes]
    first = np.cumsum(deg) - deg
    seg = np.repeat(np.arange(len(nodes)), deg)
    return graph.indices[graph.indptr[nodes][seg] + np.arange(len(seg)) - first[seg]], seg


def _sample(
    graph: Graph, pairs: np.ndarray, depth: int, k: int, rng: np.random.Generator, remove_target: bool
) -> list[Subgraph]:
    """``ego_subgraph`` for every pair of ``pairs`` (P, 2) at once (vectorised over pairs and frontiers):
    the frontier of each (pair, seed) is kept as keys ``seed_slot * n + node``, ``seed_slot = 2 * pair + side``."""
    n, P = graph.num_nodes, len(pairs)
    slot, node = np.arange(2 * P), pairs.reshape(-1)
    reached = [np.arange(P) * n + pairs[:, 0], np.arange(P) * n + pairs[:, 1]]  # keys pair * n + node
    for _ in range(depth):
        nbrs, seg = _gather(graph, node)
        deg = graph.degree[node]
        if (deg > k).any():  # keep k neighbours per frontier node, uniformly without replacement
            order = np.lexsort((rng.random(len(seg)), seg))  # segments stay in place, shuffled within
            rank = np.arange(len(seg)) - (np.cumsum(deg) - deg)[seg]
            keep = order[rank < k]
            nbrs, seg = nbrs[keep], seg[keep]
        keys = np.unique(slot[seg] * n + nbrs)  # per (pair, seed): the next frontier, deduplicated
        slot, node = keys // n, keys % n
        reached.append((slot // 2) * n + node)
    keys = np.unique(np.concatenate(reached))
    q, x = keys // n, keys % n
    others = (x != pairs[q, 0]) & (x != pairs[q, 1])
    # final node order per pair: u, v (once if u == v), then the other sampled nodes in ascending id
    roots = np.stack([pairs[:, 0], np.where(pairs[:, 0] == pairs[:, 1], -1, pairs[:, 1])], axis=1)
    root_q = np.repeat(np.arange(P), 2)[roots.reshape(-1) >= 0]
    root_x = roots.reshape(-1)[roots.reshape(-1) >= 0]
    q = np.concatenate([root_q, q[others]])
    x = np.concatenate([root_x, x[others]])
    order = np.argsort(q, kind="stable")  # roots first within each pair, then ascending ids
    q, x = q[order], x[order]
    sizes = np.bincount(q, minlength=P)
    pos = np.arange(len(q)) - np.repeat(np.cumsum(sizes) - sizes, sizes)  # local position
    # induced edges: each neighbour of a node in the same pair's node set, kept once (src < dst)
    lookup = q * n + x
    by_key = np.argsort(lookup)
    nbrs, seg = _gather(graph, x)
    target = q[seg] * n + nbrs
    at = np.minimum(np.searchsorted(lookup[by_key], target), len(q) - 1)
    hit = by_key[at]
    src, dst = pos[seg], pos[hit]
    keep = (lookup[hit] == target) & (src < dst)
    if remove_target:
        keep &= ~((src == 0) & (dst == 1) & (pairs[q[seg], 0] != pairs[q[seg], 1]))
    eq = q[seg][keep]
    edges = np.stack([src[keep], dst[keep]], axis=1)
    node_splits = np.split(x, np.cumsum(sizes)[:-1])
    edge_splits = np.split(edges, np.cumsum(np.bincount(eq, minlength=P))[:-1])
    self_pairs = pairs[:, 0] == pairs[:, 1]
    return [Subgraph(a, b, bool(c)) for a, b, c in zip(node_splits, edge_splits, self_pairs, strict=True)]


def local_ids(num_nodes: int, rng: np.random.Generator | None) -> np.ndarray:
    """Local node IDs of a subgraph whose positions 0, 1 hold u, v: u -> 0, v -> 1, the others a random
    permutation of 2..n-1 when ``rng`` is given (training), else in sampling order (evaluation)."""
    ids = np.arange(num_nodes)
    if rng is not None and num_nodes > 3:
        ids[2:] = 2 + rng.permutation(num_nodes - 2)
    return ids


@dataclass(frozen=True)
class TokenBatch:
    """A padded batch: ``tokens`` (B, L, 2M+2) float32 with node tokens at positions 0..N-1 (N = largest
    subgraph) and the two task tokens at N, N+1; ``mask`` (B, L) True where a token exists."""

    tokens: np.ndarray
    mask: np.ndarray


def tokenize(subgraphs: list[Subgraph], max_num_nodes: int, rng: np.random.Generator | None = None) -> TokenBatch:
    """The adjacency-row tokens of each subgraph (local IDs from ``local_ids``), padded into one batch."""
    M = check_int("max_num_nodes", max_num_nodes, 2)
    if not subgraphs:
        raise fail("subgraphs", subgraphs, "a non-empty list of subgraphs")
    sizes = [len(s.nodes) for s in subgraphs]
    if max(sizes) > M:
        raise fail(
            "max_num_nodes", M, f">= the subgraph size {max(sizes)}: increase max_num_nodes or lower num_neighbors"
        )
    N, B = max(sizes), len(subgraphs)
    sizes = np.asarray(sizes)
    first = np.cumsum(sizes) - sizes
    seg = np.repeat(np.arange(B), sizes)
    pos = np.arange(len(seg)) - first[seg]  # position of each node within its subgraph
    ids = pos
    if rng is not None:  # local_ids for every subgraph at once: positions >= 2 randomly permuted
        key = np.where(pos >= 2, 2.0 + rng.random(len(seg)), pos)
        ids = np.empty_like(pos)
        ids[np.lexsort((key, seg))] = pos
    edges = np.concatenate([s.edges for s in subgraphs]).reshape(-1, 2)
    eseg = np.repeat(np.arange(B), [len(s.edges) for s in subgraphs])
    a, c = ids[first[eseg] + edges[:, 0]], ids[first[eseg] + edges[:, 1]]
    tokens = np.zeros((B, N + 2, 2 * M + 2), dtype=np.float32)
    tokens[seg, ids, ids] = 1.0  # onehot(ID), node token at position = ID
    tokens[eseg, a, M + c] = 1.0  # adjacency row (unit edge weights)
    tokens[eseg, c, M + a] = 1.0
    tokens[seg, pos, 2 * M] = 1.0  # is_node
    rows = np.arange(B)
    tokens[:, N, : 2 * M] = tokens[:, 0, : 2 * M]  # task tokens copy u, v
    v_position = np.where([s.self_pair for s in subgraphs], 0, np.minimum(1, sizes - 1))  # u == v: copy u
    tokens[:, N + 1, : 2 * M] = tokens[rows, v_position, : 2 * M]
    tokens[:, N : N + 2, 2 * M + 1] = 1.0  # is_task
    mask = np.arange(N + 2)[None, :] < sizes[:, None]
    mask[:, N : N + 2] = True
    return TokenBatch(tokens, mask)


def sample_subgraphs(
    graph: Graph,
    pairs: np.ndarray,
    depth: int,
    num_neighbors: int,
    rng: np.random.Generator,
    remove_target: bool,
) -> list[Subgraph]:
    """The ego subgraph of every pair in ``pairs`` (P, 2); ``remove_target`` drops each target edge from its
    own subgraph (supervised training); the heuristic-regression study and evaluation keep the graph as is."""
    pairs = check_edges(pairs, graph.num_nodes, name="pairs", allow_self_loops=True)
    check_int("depth", depth, 1)
    check_int("num_neighbors", num_neighbors, 1)
    return _sample(graph, pairs, depth, num_neighbors, rng, remove_target)


def size_buckets(subgraphs: list[Subgraph], batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Index batches of subgraphs of similar size (less padding), in random order; ties broken at random."""
    check_int("batch_size", batch_size, 1)
    sizes = np.array([len(s.nodes) for s in subgraphs]) + rng.random(len(subgraphs))
    order = np.argsort(sizes)
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]
