import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_dprsc.method import (
    check_boxes,
    dominance_thresholds,
    exact_answers,
    noisy_sensitivity,
    project,
    release,
    truncate,
)
from icml26_dprsc.patterns import occurrences, pair_counts, sensitivity_bound, sensitivity_statistic, star, triangle
from icml26_dprsc.rangetree import DyadicTree, counter_laplace
from scipy import stats

U = 8


def brute_box_count(G, X, occ, lo, hi):
    """Occurrences whose every vertex has its attributes inside [lo, hi]."""
    inside = ((X >= lo) & (X <= hi)).all(axis=1)
    return sum(inside[list(row)].all() for row in occ)


@settings(deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3), st.sampled_from(["triangle", "star"]))
def test_projection_answers_box_counts_exactly(seed, d, kind):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(25, 0.3, seed=seed)
    X = rng.integers(0, U, size=(25, d))
    pattern = triangle() if kind == "triangle" else star(2)
    occ = occurrences(G, pattern)
    points, weights = project(occ, X, U)
    assert weights.sum() == len(occ)
    lo, hi = np.sort(rng.integers(0, U, size=(2, 5, d)), axis=0)
    got = exact_answers(points, weights, dominance_thresholds(lo, hi, U))
    assert got.tolist() == [brute_box_count(G, X, occ, lo[i], hi[i]) for i in range(5)]


@settings(deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3), st.booleans(), st.sampled_from([2, 8, 16]))
def test_tree_decomposition_equals_brute_force_dominance(seed, D, hierarchical, size):
    rng = np.random.default_rng(seed)
    points = rng.integers(0, size, size=(30, D))
    weights = rng.integers(1, 5, size=30).astype(float)
    tree = DyadicTree(points, weights, size, hierarchical=hierarchical)
    assert tree.weight.sum() == pytest.approx(weights.sum() * tree.nodes_per_point)
    for t in rng.integers(0, size, size=(5, D)):
        nodes = tree.query_nodes(t)
        assert len(set(nodes.tolist())) == len(nodes)  # disjoint canonical nodes
        assert tree.exact(nodes).sum() == pytest.approx(exact_answers(points, weights, t[None])[0])


@pytest.mark.parametrize("t", range(16))
def test_suffix_decomposition_is_a_partition_of_at_most_log_u_nodes(t):
    tree = DyadicTree(np.zeros((1, 1), int), np.ones(1), 16)
    covered = []
    for node in tree.suffix_nodes(t):
        level = int(math.log2(node + 1))
        width = 16 >> level
        start = (node - (2**level - 1)) * width
        covered += list(range(start, start + width))
    assert sorted(covered) == list(range(t, 16))
    assert len(tree.suffix_nodes(t)) <= 4


def test_answers_are_exact_in_the_no_noise_limit(small):
    G, X = small
    r = release(G, X, eps=1e7, U=U)
    lo, hi = np.array([[0], [2], [5]]), np.array([[7], [6], [5]])
    occ = occurrences(G, triangle())
    truth = [brute_box_count(G, X, occ, lo[i], hi[i]) for i in range(3)]
    assert r.answer(lo, hi) == pytest.approx(truth, abs=1e-3)


@pytest.mark.parametrize("d, hierarchical", [(1, True), (2, True), (2, False)])
def test_noiseless_release_equals_the_exact_range_counts(d, hierarchical):
    """noise=False (issue 16 API gap): the exact tree, no truncation, so answers are the exact counts."""
    from icml26_dprsc import DyadicTree as exported
    from icml26_dprsc.baselines import exact_box_counts
    from icml26_dprsc.data import random_boxes

    assert exported is DyadicTree
    G = nx.barabasi_albert_graph(60, 6, seed=1)  # hubs: the noisy release truncates occurrences here
    X = np.random.default_rng(1).integers(0, U, size=(60, d))
    lo, hi = random_boxes(X, U, 25, 0.05, np.random.default_rng(2))
    exact = release(G, X, U=U, hierarchical=hierarchical, noise=False)
    assert exact.noise_scale == 0.0 and exact.tau == math.inf and exact.n_truncated == 0
    assert np.array_equal(exact.answer(lo, hi), exact_box_counts(G, X, lo, hi, U=U))
    assert not np.allclose(release(G, X, U=U, hierarchical=hierarchical).answer(lo, hi), exact.answer(lo, hi))


def test_answers_are_consistent_post_processing(small):
    G, X = small
    r = release(G, X, U=U, seed=3)
    again = release(G, X, U=U, seed=3)
    lo, hi = np.array([[1], [1]]), np.array([[6], [6]])
    first = r.answer(lo, hi)
    assert first[0] == first[1] == again.answer(lo, hi)[0]  # one fixed noisy tree
    t = dominance_thresholds(lo[:1], hi[:1], U)[0]
    assert first[0] == pytest.approx(r.node_values(r.tree.query_nodes(t)).sum())
    assert release(G, X, U=U, seed=4).answer(lo, hi)[0] != first[0]


def test_counter_laplace_matches_the_laplace_distribution():
    scale = 2.5
    draws = counter_laplace(12345, np.arange(50_000), scale)
    assert stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert np.array_equal(draws[:100], counter_laplace(12345, np.arange(100), scale))  # keyed by counter
    other = counter_laplace(54321, np.arange(50_000), scale)
    assert abs(np.corrcoef(draws, other)[0, 1]) < 0.02


def test_release_noise_is_calibrated_to_tau_and_levels(small):
    G, X = small
    r = release(G, X, eps=2.0, U=U, eps_split=0.25)
    L = int(math.log2(U)) + 1
    assert r.noise_scale == pytest.approx(r.tau * L**2 / 1.5)  # eq. (R1), D = 2d = 2
    nodes = np.arange(0, (2 * U - 1) ** 2)
    noise = r.node_values(nodes) - r.tree.exact(nodes)
    assert stats.kstest(noise / r.noise_scale, stats.laplace().cdf).pvalue > 1e-3


def test_noisy_sensitivity_fails_with_probability_delta():
    rng = np.random.default_rng(0)
    delta, eps1, s = 0.05, 0.5, 10
    draws = np.array([noisy_sensitivity(s, triangle(), eps1, delta, rng) for _ in range(20_000)])
    below = (draws < s + 1).mean()  # the event the privacy argument charges to delta
    assert abs(below - delta) < 4 * math.sqrt(delta * (1 - delta) / 20_000)


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 10_000), st.data())
def test_neighbouring_node_vectors_differ_by_at_most_tau_times_levels(seed, data):
    G = nx.gnp_random_graph(14, 0.5, seed=seed)
    X = np.random.default_rng(seed).integers(0, U, size=(14, 2))
    u, v = data.draw(st.lists(st.integers(0, 13), min_size=2, max_size=2, unique=True))
    H = G.copy()
    H.remove_edge(u, v) if H.has_edge(u, v) else H.add_edge(u, v)
    for pattern in (triangle(), star(2)):
        tau = sensitivity_bound(pattern, sensitivity_statistic(G, pattern) + 1)  # the good event of eq. (L1)
        trees = [DyadicTree(*project(truncate(occurrences(g, pattern), pattern, 14, tau), X, U), U) for g in (G, H)]
        ids = np.union1d(trees[0].ids, trees[1].ids)
        l1 = np.abs(trees[0].exact(ids) - trees[1].exact(ids)).sum()
        assert l1 <= tau * trees[0].nodes_per_point + 1e-9


def test_truncation_caps_every_edge_and_is_identity_when_tau_is_large(small):
    G, _ = small
    occ = occurrences(G, triangle())
    _, counts = pair_counts(occ, triangle(), 40)
    assert len(truncate(occ, triangle(), 40, counts.max())) == len(occ)
    kept = truncate(occ, triangle(), 40, 1)
    assert len(kept) < len(occ)
    assert pair_counts(kept, triangle(), 40)[1].max(initial=0) <= 1


def test_bad_privacy_parameters_are_rejected(small):
    G, X = small
    with pytest.raises(ValueError, match="eps="):
        release(G, X, eps=0.0, U=U)
    with pytest.raises(ValueError, match="delta="):
        release(G, X, delta=1.0, U=U)
    with pytest.raises(ValueError, match="delta="):
        release(G, X, delta=0.0, U=U)
    with pytest.raises(ValueError, match="eps_split="):
        release(G, X, eps_split=1.0, U=U)
    with pytest.raises(ValueError, match="seed="):
        release(G, X, seed=-1, U=U)
    with pytest.raises(ValueError, match="noise=0"):
        release(G, X, noise=0, U=U)


def test_bad_attributes_are_rejected(small):
    G, X = small
    with pytest.raises(ValueError, match="U="):
        release(G, X, U=12)
    with pytest.raises(ValueError, match="X="):
        release(G, np.where(X == X.max(), np.nan, X), U=U)
    with pytest.raises(ValueError, match="X="):
        release(G, X + U, U=U)
    with pytest.raises(ValueError, match="X="):
        release(G, X[:-1], U=U)
    with pytest.raises(ValueError, match="X="):
        release(G, X + 0.5, U=U)


def test_bad_boxes_are_rejected(small):
    G, X = small
    r = release(G, X, U=U)
    with pytest.raises(ValueError, match="box="):
        r.answer([5], [2])
    with pytest.raises(ValueError, match="lo="):
        r.answer([[0, 0]], [[1, 1]])
    with pytest.raises(ValueError, match="hi="):
        r.answer([0], [U])
    with pytest.raises(ValueError, match="lo="):
        check_boxes([np.nan], [1], 1, U)
