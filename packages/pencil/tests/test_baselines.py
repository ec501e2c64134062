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
from icml26_pencil.baselines import GCNConv, edge_index, gcn_adjacency

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
    h = model.embed(gcn_adjacency(edge_index(g), 12))
    torch.testing.assert_close(h, h[:1].expand(12, -1))
    assert GCNLinkPredictor(8, 2, num_nodes=12).num_parameters() - model.num_parameters() == 11 * 8


def test_gcn_conv_is_the_normalised_propagation(karate):
    G, g = karate
    torch.manual_seed(0)
    conv = GCNConv(5, 3)
    x = torch.randn(34, 5, dtype=torch.float64)
    A = nx.to_numpy_array(G, nodelist=range(34), weight=None) + np.eye(34)
    d = A.sum(1) ** -0.5
    expected = (d[:, None] * A * d[None, :]) @ x.numpy() @ conv.lin.weight.detach().double().numpy().T
    got = conv(x.float(), gcn_adjacency(edge_index(g), 34)).detach().double().numpy()
    np.testing.assert_allclose(got, expected + conv.bias.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # imports torch_geometric (~10 s of CPU without bytecode caches)
def test_gcn_conv_matches_pyg(karate):
    from torch_geometric.nn import GCNConv as PygGCNConv

    _, g = karate
    torch.manual_seed(0)
    ours, ref = GCNConv(6, 4), PygGCNConv(6, 4)
    with torch.no_grad():
        ref.lin.weight.copy_(ours.lin.weight)
        ref.bias.copy_(torch.randn(4))
        ours.bias.copy_(ref.bias)
    x = torch.randn(34, 6)
    ei = edge_index(g)
    torch.testing.assert_close(ours(x, gcn_adjacency(ei, 34)), ref(x, ei), rtol=1e-5, atol=1e-6)


@pytest.mark.slow  # imports scikit-learn
@settings(deadline=None, max_examples=20)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 1000))
def test_metrics_match_sklearn(n_pos, n_neg, seed):
    from sklearn.metrics import r2_score, roc_auc_score

    rng = np.random.default_rng(seed)
    pos, neg = rng.integers(0, 5, n_pos).astype(float), rng.integers(0, 5, n_neg).astype(float)  # with ties
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    assert roc_auc(pos, neg) == pytest.approx(roc_auc_score(y, np.r_[pos, neg]))
    t, p = rng.normal(size=n_pos + 1), rng.normal(size=n_pos + 1)
    assert r2(t, p) == pytest.approx(r2_score(t, p))


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
    tied_pos, tied_neg = np.round(pos), np.round(neg)  # ties count 1/2
    brute = np.mean([(p > q) + 0.5 * (p == q) for p in tied_pos for q in tied_neg])
    assert roc_auc(tied_pos, tied_neg) == pytest.approx(brute)
    kth = np.sort(neg)[::-1][9]
    assert hits_at_k(pos, neg, 10) == pytest.approx(np.mean(pos > kth))
    assert hits_at_k(pos, neg[:5], 10) == 1.0
    assert r2(pos, pos) == 1.0
    assert r2(pos, np.full(50, pos.mean())) == pytest.approx(0.0)
    assert r2(pos, 2 * pos) == pytest.approx(1 - np.sum(pos**2) / np.sum((pos - pos.mean()) ** 2))
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
        GCNLinkPredictor(8, 1, num_nodes=5).embed(gcn_adjacency(torch.zeros(2, 0, dtype=torch.long), 7))
    with pytest.raises(ValueError, match="epochs="):
        train_gcn(GCNLinkPredictor(8), g, 0, 1e-2, 0)
