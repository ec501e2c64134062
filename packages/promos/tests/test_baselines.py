"""Baselines: residual score, teacher-kNN distance and DOMINANT against brute-force references."""

import numpy as np
import pytest
import torch
from icml26_promos import Dominant, Graph, residual_score, teacher_knn_score
from icml26_promos.baselines import structure_error


def ring(n: int) -> np.ndarray:
    src = np.arange(n)
    return np.concatenate([np.stack([src, (src + 1) % n]), np.stack([(src + 1) % n, src])], axis=1)


def test_residual_score_brute_force():
    x = np.random.default_rng(0).normal(size=(12, 3)).astype(np.float32)
    score = residual_score(Graph(x, ring(12)))
    expected = [np.linalg.norm(x[v] - (x[(v - 1) % 12] + x[(v + 1) % 12]) / 2) for v in range(12)]
    np.testing.assert_allclose(score, expected, rtol=1e-5)


@pytest.mark.parametrize(
    "edges",
    [
        [[0, 1, 1, 2], [1, 0, 2, 1]],  # both directions
        [[0, 1], [1, 2]],  # one direction only
        [[0, 0, 1, 1, 2, 1], [1, 1, 0, 2, 1, 1]],  # edge 0-1 listed twice, and a self loop
    ],
)
def test_residual_score_does_not_depend_on_how_the_edge_list_is_written(edges):
    """Issue 16.3: x = [[0], [1], [3]] on the path 0-1-2 scores [1, 0.5, 2] however the edges are listed."""
    graph = Graph(np.array([[0.0], [1.0], [3.0]]), np.array(edges))
    np.testing.assert_allclose(residual_score(graph), [1.0, 0.5, 2.0])
    assert sorted(map(tuple, graph.edge_index.T)) == [(0, 1), (1, 0), (1, 2), (2, 1)]


def test_teacher_knn_matches_sklearn():
    from sklearn.neighbors import NearestNeighbors

    g = torch.Generator().manual_seed(0)
    t, s = torch.randn(30, 4, generator=g), torch.randn(50, 4, generator=g)
    dist, _ = NearestNeighbors(n_neighbors=3).fit(s.numpy()).kneighbors(t.numpy())
    np.testing.assert_allclose(teacher_knn_score(t, s, k=3), dist.mean(1), rtol=1e-4)


def test_teacher_knn_rejects_k_above_sources():
    with pytest.raises(ValueError, match="k="):
        teacher_knn_score(torch.randn(3, 2), torch.randn(2, 2), k=3)


def test_structure_error_exact_matches_dense():
    z = torch.randn(15, 4)
    e = torch.from_numpy(ring(15))
    A = torch.zeros(15, 15)
    A[e[0], e[1]] = 1.0
    dense = (A - torch.sigmoid(z @ z.T)).norm(dim=1)
    torch.testing.assert_close(structure_error(z, e, max_columns=15), dense, atol=1e-4, rtol=1e-4)


def test_structure_error_sampled_is_close_to_exact():
    z = torch.randn(3000, 4) * 0.3
    e = torch.from_numpy(ring(3000))
    exact, sampled = structure_error(z, e, 3000), structure_error(z, e, 1500)
    assert (sampled - exact).abs().max() / exact.mean() < 0.1


def test_dominant_fits_and_scores():
    rng = np.random.default_rng(0)
    graph = Graph(rng.normal(size=(40, 6)).astype(np.float32), ring(40))
    score = Dominant(dim=6, hidden=8, epochs=3).fit([graph]).decision_function(graph)
    assert score.shape == (40,) and np.isfinite(score).all() and (score >= 0).all()


@pytest.mark.parametrize(
    ("kwargs", "name"), [({"weight": 1.5}, "weight"), ({"epochs": 0}, "epochs"), ({"lr": 0}, "lr")]
)
def test_dominant_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Dominant(**kwargs)


def test_dominant_rejects_unaligned_graph():
    graph = Graph(np.zeros((5, 3), np.float32), ring(5))
    with pytest.raises(ValueError, match="graph.x"):
        Dominant(dim=6).decision_function(graph)
