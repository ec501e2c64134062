import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_pencil import Graph, powerlaw_cluster_edges, sample_non_edges, split_edges


@settings(deadline=None)
@given(st.integers(3, 30), st.floats(0.05, 0.6), st.integers(0, 1000))
def test_csr_matches_networkx(n, p, seed):
    G = nx.gnp_random_graph(n, p, seed=seed)
    if G.number_of_edges() == 0:
        return
    g = Graph.from_networkx(G)
    for i in range(n):
        assert g.neighbors(i).tolist() == sorted(G.neighbors(i))
    assert g.num_edges == G.number_of_edges()
    assert {tuple(e) for e in g.edges().tolist()} == {(min(e), max(e)) for e in G.edges()}


def test_split_is_a_partition_with_true_negatives():
    edges = powerlaw_cluster_edges(200, 3, 0.5, 0)
    split = split_edges(edges, 200, seed=1)
    held = np.concatenate([split.val_pos, split.test_pos])
    assert split.train.num_edges + len(held) == len(edges)
    assert len(split.test_pos) == round(0.1 * len(edges)) == len(split.test_neg)
    full = {tuple(e) for e in edges.tolist()}
    train = {tuple(e) for e in split.train.edges().tolist()}
    assert not train & {tuple(e) for e in held.tolist()}
    assert not full & {tuple(e) for e in np.concatenate([split.val_neg, split.test_neg]).tolist()}


def test_negatives_are_distinct_non_edges(karate):
    G, g = karate
    neg = sample_non_edges(g, 200, np.random.default_rng(0))
    assert len({tuple(e) for e in neg.tolist()}) == 200
    assert (neg[:, 0] < neg[:, 1]).all()
    assert not any(G.has_edge(u, v) for u, v in neg.tolist())


@pytest.mark.parametrize(
    ("edges", "num_nodes", "match"),
    [
        (np.array([[0, 5]]), 3, "edges=.*node ids in"),
        (np.array([[1, 1]]), 3, "edges=.*self-loops"),
        (np.array([[0, 1, 2]]), 3, "edges=.*shape"),
        (np.zeros((0, 2), dtype=int), 3, "edges=.*non-empty"),
        (np.array([[0.0, np.nan]]), 3, "edges=.*finite"),
        (np.array([[0.0, 1.0]]), 3, "edges=.*integer"),
        (np.array([[0, 1]]), 0, "num_nodes="),
    ],
)
def test_bad_graphs(edges, num_nodes, match):
    with pytest.raises(ValueError, match=match):
        Graph.from_edges(edges, num_nodes)


def test_bad_split_and_generator_arguments(karate):
    _, g = karate
    with pytest.raises(ValueError, match="count="):
        sample_non_edges(g, 10**6, np.random.default_rng(0))
    with pytest.raises(ValueError, match="val="):
        split_edges(g.edges(), 34, 0, val=0.0)
    with pytest.raises(ValueError, match="test="):
        split_edges(g.edges(), 34, 0, test=0.99)
    with pytest.raises(ValueError, match="p="):
        powerlaw_cluster_edges(50, 2, 1.5, 0)
    with pytest.raises(ValueError, match="m="):
        powerlaw_cluster_edges(50, 60, 0.5, 0)


def test_bad_networkx_graphs():
    with pytest.raises(ValueError, match="G="):
        Graph.from_networkx(nx.DiGraph([(0, 1)]))
    with pytest.raises(ValueError, match="G="):
        Graph.from_networkx(nx.Graph([(1, 2)]))


def test_sample_non_edges_respects_exclude():
    g = Graph.from_networkx(nx.path_graph(5))  # 4 edges, 6 non-edges
    exclude = np.array([[0, 2], [4, 1]])
    neg = sample_non_edges(g, 4, np.random.default_rng(0), exclude=exclude)
    assert {tuple(p) for p in neg.tolist()} == {(0, 3), (0, 4), (1, 3), (2, 4)}
