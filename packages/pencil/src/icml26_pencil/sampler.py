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
    ``nodes[1] = v`` and local undirected ``edges`` (e, 2) between positions of ``nodes``."""

    nodes: np.ndarray
    edges: np.ndarray


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
    roots = np.array([u, v], dtype=np.int64)
    sampled = [roots]
    for root in roots:
        frontier = root[None]
        for _ in range(depth):
            nxt = []
            for x in frontier.tolist():
                nbrs = graph.indices[graph.indptr[x] : graph.indptr[x + 1]]
                if len(nbrs) > num_neighbors:
                    nbrs = nbrs[np.argpartition(rng.random(len(nbrs)), num_neighbors)[:num_neighbors]]
                nxt.append(nbrs)
            frontier = np.unique(np.concatenate(nxt)) if nxt else frontier[:0]
            sampled.append(frontier)
    others = np.setdiff1d(np.concatenate(sampled), roots)
    nodes = np.concatenate([roots[: 1 if u == v else 2], others])
    return Subgraph(nodes, induced_edges(graph, nodes, drop=(u, v) if remove_target else None))


def induced_edges(graph: Graph, nodes: np.ndarray, drop: tuple[int, int] | None = None) -> np.ndarray:
    """Local edges (e, 2) with a < b of the subgraph of ``graph`` induced on ``nodes`` (positions in
    ``nodes``), without the edge ``drop`` (global ids) when given."""
    starts, ends = graph.indptr[nodes], graph.indptr[nodes + 1]
    lens = ends - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    nbrs = graph.indices[offsets + np.arange(lens.sum())]
    src = np.repeat(np.arange(len(nodes)), lens)
    order = np.argsort(nodes)
    at = np.searchsorted(nodes[order], nbrs)
    at = np.minimum(at, len(nodes) - 1)
    inside = nodes[order][at] == nbrs
    dst = order[at]
    keep = inside & (src < dst)
    if drop is not None:
        a, b = drop
        gs, gd = nodes[src], nodes[dst]
        keep &= ~(((gs == a) & (gd == b)) | ((gs == b) & (gd == a)))
    return np.stack([src[keep], dst[keep]], axis=1)


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
    N = max(sizes)
    tokens = np.zeros((len(subgraphs), N + 2, 2 * M + 2), dtype=np.float32)
    mask = np.zeros((len(subgraphs), N + 2), dtype=bool)
    for b, sub in enumerate(subgraphs):
        n = len(sub.nodes)
        ids = local_ids(n, rng)
        a, c = ids[sub.edges[:, 0]], ids[sub.edges[:, 1]]
        tokens[b, ids, ids] = 1.0  # onehot(ID), node token at position = ID
        tokens[b, a, M + c] = 1.0  # adjacency row (unit edge weights)
        tokens[b, c, M + a] = 1.0
        tokens[b, :n, 2 * M] = 1.0  # is_node
        tokens[b, N : N + 2, : 2 * M] = tokens[b, [0, min(1, n - 1)], : 2 * M]  # task tokens copy u, v
        tokens[b, N : N + 2, 2 * M + 1] = 1.0  # is_task
        mask[b, :n] = True
        mask[b, N : N + 2] = True
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
    return [ego_subgraph(graph, u, v, depth, num_neighbors, rng, remove_target) for u, v in pairs.tolist()]


def size_buckets(subgraphs: list[Subgraph], batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Index batches of subgraphs of similar size (less padding), in random order; ties broken at random."""
    check_int("batch_size", batch_size, 1)
    sizes = np.array([len(s.nodes) for s in subgraphs]) + rng.random(len(subgraphs))
    order = np.argsort(sizes)
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]
