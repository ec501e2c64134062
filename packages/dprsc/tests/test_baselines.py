import math
import os

import networkx as nx
import numpy as np
import pytest
from icml26_dprsc.baselines import (
    exact_box_counts,
    flat_grid_release,
    global_laplace_answers,
    local_laplace_answers,
    randomized_response_answers,
    randomized_response_graph,
)
from icml26_dprsc.patterns import star

U = 8
BOXES = (np.array([[0], [2], [3]]), np.array([[7], [5], [3]]))


def test_exact_counts_match_networkx_on_induced_subgraphs(small):
    G, X = small
    for lo, hi, count in zip(*BOXES, exact_box_counts(G, X, *BOXES, U=U), strict=True):
        inside = [v for v in G if lo[0] <= X[v, 0] <= hi[0]]
        assert count == sum(nx.triangles(G.subgraph(inside)).values()) // 3


def test_every_baseline_is_exact_in_the_no_noise_limit(small):
    G, X = small
    truth = exact_box_counts(G, X, *BOXES, U=U)
    assert global_laplace_answers(G, X, *BOXES, eps=1e9, U=U) == pytest.approx(truth, abs=1e-3)
    assert local_laplace_answers(G, X, *BOXES, eps=1e9, U=U) == pytest.approx(truth, abs=1e-3)
    assert randomized_response_answers(G, X, *BOXES, eps=50.0, U=U) == pytest.approx(truth, abs=1e-6)
    assert flat_grid_release(G, X, eps=1e9, U=U).answer(*BOXES) == pytest.approx(truth, abs=1e-3)


def test_global_laplace_noise_has_the_composed_scale(small):
    G, X = small
    lo, hi = np.zeros((4000, 1), int), np.full((4000, 1), U - 1)
    noise = global_laplace_answers(G, X, lo, hi, eps=1.0, U=U) - exact_box_counts(G, X, lo[:1], hi[:1], U=U)[0]
    scale = (40 - 2) * 4000 / 1.0  # GS = n - 2 for triangles, Q = 4000 queries
    assert np.abs(noise).mean() == pytest.approx(scale, rel=0.08)  # E|Lap(b)| = b


def test_randomized_response_is_unbiased_and_matches_direct_count(small):
    G, X = small
    truth = exact_box_counts(G, X, *BOXES, U=U)
    estimates = np.array([randomized_response_answers(G, X, *BOXES, eps=2.0, U=U, seed=s) for s in range(300)])
    sem = estimates.std(axis=0) / math.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 4 * sem)
    noisy = randomized_response_graph(G, 2.0, seed=0)  # the cell-table shortcut equals the dense formula
    q = 1 / (1 + math.exp(2.0))
    x = (noisy - q) / (1 - 2 * q)
    np.fill_diagonal(x, 0.0)
    inside = np.flatnonzero((X[:, 0] >= 2) & (X[:, 0] <= 5))
    xr = x[np.ix_(inside, inside)]
    direct = np.trace(xr @ xr @ xr) / 6
    assert randomized_response_answers(G, X, *BOXES, eps=2.0, U=U, seed=0)[1] == pytest.approx(direct, rel=1e-6)


def test_randomized_response_graph_flips_with_probability_q():
    G = nx.empty_graph(300)
    noisy = randomized_response_graph(G, 1.0, seed=1)
    assert np.array_equal(noisy, noisy.T) and np.all(np.diag(noisy) == 0)
    rate = noisy[np.triu_indices(300, 1)].mean()
    assert rate == pytest.approx(1 / (1 + math.e), abs=0.01)


def test_flat_grid_puts_each_point_in_one_cell(small):
    G, X = small
    assert flat_grid_release(G, X, U=U).tree.nodes_per_point == 1


def test_baselines_reject_bad_inputs(small):
    G, X = small
    with pytest.raises(ValueError, match="eps="):
        global_laplace_answers(G, X, *BOXES, eps=-1.0, U=U)
    with pytest.raises(ValueError, match="delta="):
        local_laplace_answers(G, X, *BOXES, delta=2.0, U=U)
    with pytest.raises(ValueError, match="pattern="):
        randomized_response_answers(G, X, *BOXES, pattern=star(2), U=U)
    with pytest.raises(ValueError, match="box="):
        exact_box_counts(G, X, [[4]], [[1]], U=U)
    with pytest.raises(ValueError, match="G="):
        randomized_response_answers(nx.DiGraph(G), X, *BOXES, U=U)


@pytest.mark.skipif(not os.environ.get("ICML26_DATA_MIRROR"), reason="needs the Planetoid files")
def test_real_graph_baselines_run():
    from icml26_dprsc.data import planetoid_graph

    G, X = planetoid_graph("cora", 1, 16)
    assert (G.number_of_nodes(), G.number_of_edges()) == (2708, 5278)
    assert exact_box_counts(G, X, [[0]], [[15]], U=16)[0] == sum(nx.triangles(G).values()) // 3
