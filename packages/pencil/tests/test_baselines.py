import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_pencil import (
    GCNLinkPredictor,
    Graph,
    adamic_adar,
    common_neighbors,
    hits_at_k,
    katz,
    normalize_log_minmax,
    predict_gcn,
    r2,
    resource_allocation,
    roc_auc,
    train_gcn,
)

torch.set_num_threads(1)


@settings(deadline=None)
@given(st.integers(4, 25), st.floats(0.1, 0.7), st.integers(0, 1000))
def test_heuristics_match_networkx(n, p, seed):
    G = nx.gnp_random_graph(n, p, seed=seed)
    if G.number_of_edges() == 0:
        return
    g = Graph.from_networkx(G)
    pairs = np.array([(u, v) for u in range(n) for v in range(u + 1, n)])
    cn = [len(list(nx.common_neighbors(G, u, v))) for u, v in pairs]
    np.testing.assert_allclose(common_neighbors(g, pairs), cn)
    np.testing.assert_allclose(resource_allocation(g, pairs), [s for *_, s in nx.resource_allocation_index(G, pairs)])
    np.testing.assert_allclose(adamic_adar(g, pairs), [s for *_, s in nx.adamic_adar_index(G, pairs)])


def test_katz_matches_the_closed_form(karate):
    G, g = karate
    A = nx.to_numpy_array(G, nodelist=range(34), weight=None)
    S = np.linalg.inv(np.eye(34) - 0.005 * A) - np.eye(34)
    pairs = np.array([(u, v) for u in range(34) for v in range(34)])
    np.testing.assert_allclose(katz(g, pairs), S[pairs[:, 0], pairs[:, 1]], rtol=1e-9, atol=1e-14)
    with pytest.raises(ValueError, match="beta="):
        katz(g, pairs, beta=0.9)  # beyond 1 / lambda_max: the series diverges


def test_featureless_gcn_cannot_separate_automorphic_nodes():
    g = Graph.from_networkx(nx.cycle_graph(12))
    torch.manual_seed(0)
    model = GCNLinkPredictor(hidden=8, num_layers=2)
    h = model.embed(torch.from_numpy(np.stack([np.repeat(np.arange(12), 2), g.indices])), 12)
    torch.testing.assert_close(h, h[:1].expand(12, -1))
    assert GCNLinkPredictor(8, 2, num_nodes=12).num_parameters() - model.num_parameters() == 11 * 8


def test_gcn_training_reduces_the_loss(karate):
    _, g = karate
    torch.manual_seed(0)
    model = GCNLinkPredictor(hidden=16, num_layers=1, num_nodes=34)
    history = train_gcn(model, g, epochs=30, lr=1e-2, seed=0)
    assert history[-1] < history[0]
    assert predict_gcn(model, g, g.edges()).shape == (g.num_edges,)


def test_metrics_against_brute_force():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(1, 1, 50), rng.normal(0, 1, 70)
    brute = np.mean([(p > q) + 0.5 * (p == q) for p in pos for q in neg])
    assert roc_auc(pos, neg) == pytest.approx(brute)
    kth = np.sort(neg)[::-1][9]
    assert hits_at_k(pos, neg, 10) == pytest.approx(np.mean(pos > kth))
    assert hits_at_k(pos, neg[:5], 10) == 1.0
    assert r2(pos, pos) == 1.0
    y = normalize_log_minmax(np.array([0.0, 1, 3, 7]))
    np.testing.assert_allclose(y, np.log1p([0, 1, 3, 7]) / np.log1p(7), atol=1e-3)


def test_bad_baseline_inputs(karate):
    _, g = karate
    with pytest.raises(ValueError, match="pairs="):
        common_neighbors(g, np.array([[0, 99]]))
    with pytest.raises(ValueError, match="k="):
        hits_at_k(np.ones(3), np.ones(3), 0)
    with pytest.raises(ValueError, match="pos_scores="):
        roc_auc(np.array([np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="y_pred="):
        r2(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="scores="):
        normalize_log_minmax(np.ones(4))
    with pytest.raises(ValueError, match="hidden="):
        GCNLinkPredictor(hidden=0)
    with pytest.raises(ValueError, match="num_nodes="):
        GCNLinkPredictor(8, 1, num_nodes=5).embed(torch.zeros(2, 0, dtype=torch.long), 7)
    with pytest.raises(ValueError, match="epochs="):
        train_gcn(GCNLinkPredictor(8), g, 0, 1e-2, 0)
