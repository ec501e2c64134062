import itertools
import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_dprsc.patterns import (
    from_graph,
    global_sensitivity,
    occurrences,
    pair_counts,
    sensitivity_bound,
    sensitivity_statistic,
    star,
    triangle,
)

graphs = st.builds(
    lambda n, p, seed: nx.gnp_random_graph(n, p, seed=seed),
    st.integers(3, 12),
    st.floats(0.1, 0.9),
    st.integers(0, 10_000),
)


def edge_sets(G, occ, pattern):
    """Occurrences as sets of host edges (what identifies a subgraph)."""
    return {frozenset(frozenset((int(r[a]), int(r[b]))) for a, b in pattern.edges) for r in occ}


def brute_local_sensitivity(G, pattern):
    """max over pairs uv of #occurrences using uv in G + uv (by recounting)."""
    best = 0
    for u, v in itertools.combinations(G.nodes, 2):
        plus, minus = G.copy(), G.copy()
        plus.add_edge(u, v)
        minus.remove_edges_from([(u, v)])
        best = max(best, len(occurrences(plus, pattern)) - len(occurrences(minus, pattern)))
    return best


@settings(deadline=None)
@given(graphs)
def test_triangles_match_networkx_and_generic(G):
    occ = occurrences(G, triangle())
    assert len(occ) == sum(nx.triangles(G).values()) // 3
    generic = from_graph(nx.complete_graph(3))
    assert edge_sets(G, occ, triangle()) == edge_sets(G, occurrences(G, generic), generic)


@settings(deadline=None)
@given(graphs, st.integers(1, 3))
def test_stars_match_degree_formula_and_generic(G, k):
    occ = occurrences(G, star(k))
    assert len(occ) == (G.number_of_edges() if k == 1 else sum(math.comb(d, k) for _, d in G.degree()))
    generic = from_graph(nx.star_graph(k))
    assert edge_sets(G, occ, star(k)) == edge_sets(G, occurrences(G, generic), generic)


small_graphs = st.builds(
    lambda n, seed: nx.gnp_random_graph(n, 0.5, seed=seed), st.integers(3, 7), st.integers(0, 10_000)
)


@settings(deadline=None, max_examples=10)
@given(small_graphs)
def test_sensitivity_bound_covers_brute_force_local_sensitivity(G):
    for pattern in (triangle(), star(2), from_graph(nx.path_graph(4), "P4")):
        s = sensitivity_statistic(G, pattern)
        assert brute_local_sensitivity(G, pattern) <= sensitivity_bound(pattern, s)
    assert brute_local_sensitivity(G, triangle()) == sensitivity_statistic(G, triangle())  # exact for K3


@settings(deadline=None)
@given(graphs, st.data())
def test_statistic_has_global_sensitivity_one(G, data):
    u, v = data.draw(st.lists(st.sampled_from(sorted(G.nodes)), min_size=2, max_size=2, unique=True))
    H = G.copy()
    H.remove_edge(u, v) if H.has_edge(u, v) else H.add_edge(u, v)
    for pattern in (triangle(), star(2)):
        assert abs(sensitivity_statistic(G, pattern) - sensitivity_statistic(H, pattern)) <= 1


def test_global_sensitivity_is_attained_on_complete_graph():
    K = nx.complete_graph(7)
    assert brute_local_sensitivity(K, triangle()) == global_sensitivity(triangle(), 7)
    assert brute_local_sensitivity(K, star(2)) == global_sensitivity(star(2), 7)


def test_pair_counts_are_codegrees_for_triangles(small):
    G, _ = small
    keys, counts = pair_counts(occurrences(G, triangle()), triangle(), G.number_of_nodes())
    for key, count in zip(keys, counts, strict=True):
        u, v = divmod(int(key), G.number_of_nodes())
        assert count == len(set(G[u]) & set(G[v]))


def test_bad_graphs_are_rejected():
    G = nx.gnp_random_graph(10, 0.4, seed=1)
    with pytest.raises(ValueError, match="G="):
        occurrences(nx.DiGraph(G), triangle())
    with pytest.raises(ValueError, match="G="):
        occurrences(nx.MultiGraph(G), triangle())
    loop = G.copy()
    loop.add_edge(0, 0)
    with pytest.raises(ValueError, match="G="):
        occurrences(loop, triangle())
    with pytest.raises(ValueError, match="G="):
        occurrences(nx.relabel_nodes(G, {0: "a"}), triangle())


def test_bad_patterns_are_rejected():
    with pytest.raises(ValueError, match="k="):
        star(0)
    with pytest.raises(ValueError, match="H="):
        from_graph(nx.Graph([(0, 1), (2, 3)]))
    with pytest.raises(ValueError, match="H="):
        from_graph(nx.complete_graph(6))
    with pytest.raises(ValueError, match="n="):
        global_sensitivity(triangle(), 2)
