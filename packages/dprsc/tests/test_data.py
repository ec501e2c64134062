import numpy as np
import pytest
from icml26_dprsc.data import community_attributes, planetoid_graph, powerlaw_cluster_graph, random_boxes, sbm_graph


def test_sbm_attributes_are_in_the_domain_and_follow_blocks():
    G, X = sbm_graph(200, 4, 0.3, 0.01, 2, 16, spread=0.05, seed=0)
    assert G.number_of_nodes() == 200 and X.shape == (200, 2)
    assert X.min() >= 0 and X.max() < 16 and np.issubdtype(X.dtype, np.integer)
    within = np.abs(X[:50] - np.median(X[:50], axis=0)).mean()
    across = np.abs(X - np.median(X, axis=0)).mean()
    assert within < across  # vertices of one block share their attributes


def test_powerlaw_cluster_graph_is_simple_with_attributes():
    G, X = powerlaw_cluster_graph(100, 3, 0.5, 1, 8, seed=1)
    assert G.number_of_nodes() == 100 and X.shape == (100, 1) and 0 <= X.min() <= X.max() < 8


def test_random_boxes_hold_the_minimum_fraction():
    _, X = sbm_graph(200, 4, 0.3, 0.01, 2, 16, seed=0)
    lo, hi = random_boxes(X, 16, 30, 0.1, np.random.default_rng(0))
    assert lo.shape == hi.shape == (30, 2) and (lo <= hi).all()
    inside = ((X[None] >= lo[:, None]) & (X[None] <= hi[:, None])).all(axis=2).mean(axis=1)
    assert (inside >= 0.1).all()


def test_data_bad_inputs():
    _, X = sbm_graph(50, 2, 0.3, 0.01, 1, 8, seed=0)
    with pytest.raises(ValueError, match="min_fraction="):
        random_boxes(X, 8, 5, 1.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="p_in="):
        sbm_graph(50, 2, 1.5, 0.01, 1, 8)
    with pytest.raises(ValueError, match="p_out="):
        sbm_graph(50, 2, 0.3, 0.0, 1, 8)
    with pytest.raises(ValueError, match="blocks="):
        sbm_graph(50, 0, 0.3, 0.01, 1, 8)
    with pytest.raises(ValueError, match="n="):
        sbm_graph(2, 1, 0.3, 0.01, 1, 8)
    with pytest.raises(ValueError, match="m="):
        powerlaw_cluster_graph(50, 0, 0.5, 1, 8)
    with pytest.raises(ValueError, match="Q="):
        random_boxes(X, 8, 0, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="d="):
        community_attributes(np.zeros(3, int), 0, 8, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="p="):
        powerlaw_cluster_graph(50, 2, 1.5, 1, 8)
    with pytest.raises(ValueError, match="spread="):
        community_attributes(np.zeros(3, int), 1, 8, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="name="):
        planetoid_graph("pubmed", 1, 8)
    with pytest.raises(ValueError, match="d="):
        planetoid_graph("cora", 9, 8)
