"""Invariants of ProMoS's pieces: alignment, residual features, soft labels, routing, weights, scores."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_promos import (
    Graph,
    MixtureOfStudents,
    ProMoS,
    align_features,
    commitment_weights,
    kl_per_node,
    residual_features,
    soft_labels,
)
from icml26_promos.method import squared_distances


def ring(n: int) -> np.ndarray:
    """Edges of an n-cycle, both directions: (2, 2n)."""
    src = np.arange(n)
    return np.concatenate([np.stack([src, (src + 1) % n]), np.stack([(src + 1) % n, src])], axis=1)


@settings(max_examples=20, deadline=None)
@given(st.integers(3, 40), st.integers(1, 6), st.integers(0, 10_000))
def test_residual_matches_brute_force(n, f, seed):
    x = np.random.default_rng(seed).normal(size=(n, f)).astype(np.float32)
    e = ring(n)
    r = residual_features(torch.from_numpy(x), torch.from_numpy(e)).numpy()
    expected = np.stack([x[v] - x[e[1][e[0] == v]].mean(0) for v in range(n)])
    np.testing.assert_allclose(r, expected, atol=1e-5)


def test_isolated_node_residual_is_its_features():
    x = torch.randn(3, 2)
    r = residual_features(x, torch.tensor([[0, 1], [1, 0]]))
    torch.testing.assert_close(r[2], x[2])


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 30), st.integers(1, 8), st.floats(0.1, 10.0), st.integers(0, 10_000))
def test_soft_labels_are_distributions_matching_brute_force(n, K, tau, seed):
    g = torch.Generator().manual_seed(seed)
    h, P = torch.randn(n, 4, generator=g), torch.randn(K, 4, generator=g)
    q = soft_labels(h, P, tau)
    torch.testing.assert_close(q.sum(1), torch.ones(n))
    brute = torch.softmax(-(torch.cdist(h, P) ** 2) / tau, dim=1)
    torch.testing.assert_close(q, brute, atol=1e-5, rtol=1e-4)


def test_soft_labels_tau_to_zero_is_nearest_prototype():
    h, P = torch.randn(50, 3), torch.randn(6, 3)
    q = soft_labels(h, P, 1e-4)
    assert torch.equal(q.argmax(1), torch.cdist(h, P).argmin(1))
    assert (q.max(1).values > 0.99).float().mean() > 0.9


def test_kl_is_zero_iff_equal_and_positive_otherwise():
    q = torch.softmax(torch.randn(10, 5), 1)
    assert kl_per_node(q, q).abs().max() < 1e-6
    assert (kl_per_node(q, torch.softmax(torch.randn(10, 5), 1)) > 0).all()


def test_squared_distances_brute_force():
    h, P = torch.randn(7, 3), torch.randn(4, 3)
    torch.testing.assert_close(squared_distances(h, P), torch.cdist(h, P) ** 2, atol=1e-5, rtol=1e-5)


def test_commitment_weights_sum_to_one_and_favour_agreement():
    P = torch.tensor([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    rho = soft_labels(P, P, 2.0)
    agree = rho[0:1]  # q(t^) equal to prototype 0's structure row: discrepancy 0
    disagree = torch.tensor([[0.34, 0.33, 0.33]])
    w = commitment_weights(torch.cat([agree, disagree]), P, 2.0, beta=1.0, mu=0.6)
    assert abs(float(w.sum()) - 1.0) < 1e-6 and w[0] > w[1]


def test_commitment_weights_official_log_variant():
    """Issue 20: log_eps=0 is the official sim.log(); it differs from log(q + 1e-8) only where q is tiny."""
    P = torch.tensor([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    smooth = soft_labels(torch.randn(50, 2, generator=torch.Generator().manual_seed(0)), P, 20.0)
    torch.testing.assert_close(
        commitment_weights(smooth, P, 2.0, 1.0, 0.6, log_eps=0.0),
        commitment_weights(smooth, P, 2.0, 1.0, 0.6),
        atol=1e-6,
        rtol=1e-5,
    )
    peaked = soft_labels(torch.tensor([[0.0, 0.0], [0.2, 0.1], [5.0, 0.2]]), P, 0.05)  # exact float32 zeros
    assert (peaked == 0).any(dim=1).all()
    official = commitment_weights(peaked, P, 2.0, 1.0, 0.6, log_eps=0.0)
    ours = commitment_weights(peaked, P, 2.0, 1.0, 0.6)
    assert float(official.sum()) == 0.0  # every node has a zero under rho > 0: the commitment loss vanishes
    assert abs(float(ours.sum()) - 1.0) < 1e-6
    with pytest.raises(ValueError, match="log_eps"):
        commitment_weights(peaked, P, 2.0, 1.0, 0.6, log_eps=-1e-8)


def test_router_uses_top_k_experts_with_weights_summing_to_one():
    torch.manual_seed(0)
    mos = MixtureOfStudents(dim=4, num_experts=5, top_k=2, dropout=0.0).eval()
    z = torch.randn(6, 4)
    g, s = mos(z)
    logits, chosen = torch.topk(mos.router(z), 2, dim=1)
    p = torch.softmax(logits, 1)
    manual = torch.stack([sum(p[v, j] * mos.experts[int(chosen[v, j])](z[v]) for j in range(2)) for v in range(6)]) + z
    torch.testing.assert_close(s, manual)
    torch.testing.assert_close(g, mos.generalist(z) + z)


def test_alignment_orders_columns_by_smoothness_and_keeps_pca_columns():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(0)
    x, e = rng.normal(size=(80, 20)), ring(80)
    z = align_features(x, e, d=10)
    pca = PCA(10, random_state=0).fit_transform(np.asarray(x, dtype=np.float64))
    assert z.shape == (80, 10)
    # every aligned column is a PCA column up to sign
    for k in range(10):
        assert max(abs(np.corrcoef(z[:, k], pca[:, j])[0, 1]) for j in range(10)) > 0.999
    scaled = (z - z.min(0)) / (z.max(0) - z.min(0))
    s = ((scaled[e[0]] - scaled[e[1]]) ** 2).mean(0)
    assert (np.diff(s) >= -1e-6).all()


def test_alignment_projects_low_dimensional_features():
    rng = np.random.default_rng(1)
    assert align_features(rng.normal(size=(100, 5)), ring(100), d=64).shape == (100, 64)


def tiny_graph(seed: int, n: int = 70) -> Graph:
    rng = np.random.default_rng(seed)
    return Graph(rng.normal(size=(n, 8)).astype(np.float32), ring(n), name=f"g{seed}")


SMALL = dict(dim=8, num_experts=3, num_prototypes=4, hidden=16, epochs=2, teacher_epochs=2)


@pytest.fixture(scope="module")
def sources() -> list[Graph]:
    return [tiny_graph(0), tiny_graph(1)]


@pytest.fixture(scope="module")
def fitted(sources) -> ProMoS:
    """One small ProMoS (teacher included) trained once and shared by the tests that only score."""
    return ProMoS(**SMALL, seed=3).fit(sources)


def test_promos_fit_and_score_shapes_and_determinism(sources, fitted):
    a = fitted.decision_function(tiny_graph(2, 30))
    b = ProMoS(**SMALL, seed=3).fit(sources).decision_function(tiny_graph(2, 30))
    assert a.shape == (30,) and np.isfinite(a).all() and (a >= 0).all()
    np.testing.assert_allclose(a, b)
    for ablation in ({"personalised": False}, {"prototypes": False}, {"commitment_log_eps": 0.0}):
        # the teacher is frozen and shared: only the students, adapter and prototypes differ per ablation
        c = ProMoS(**SMALL, **ablation).fit(sources, teacher=fitted.teacher).decision_function(tiny_graph(2, 30))
        assert c.shape == (30,) and np.isfinite(c).all()


def test_score_components_add_up_to_the_decision_function(fitted):
    parts = fitted.score_components(tiny_graph(2, 30))
    assert set(parts) == {"distillation_bias", "geometric_deviation"}
    assert all(v.shape == (30,) and (v >= 0).all() for v in parts.values())
    total = parts["distillation_bias"] + fitted.lam * parts["geometric_deviation"]
    np.testing.assert_array_equal(fitted.decision_function(tiny_graph(2, 30)), total)


def test_score_before_fit_raises():
    with pytest.raises(RuntimeError, match="fit"):
        ProMoS(dim=8).decision_function(tiny_graph(0))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"num_experts": 0}, "num_experts"),
        ({"num_experts": 2, "top_k": 3}, "top_k"),
        ({"num_prototypes": 0}, "num_prototypes"),
        ({"tau": 0.0}, "tau"),
        ({"lr": -1.0}, "lr"),
        ({"epochs": 0}, "epochs"),
        ({"lam": float("nan")}, "lam"),
        ({"commitment_log_eps": -1.0}, "commitment_log_eps"),
    ],
)
def test_bad_hyperparameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ProMoS(**kwargs)


def test_too_many_prototypes_for_kmeans():
    with pytest.raises(ValueError, match="num_prototypes"):
        ProMoS(dim=8, num_prototypes=500, teacher_epochs=1, epochs=1).fit([tiny_graph(0)])


def test_unaligned_graph_rejected(fitted):
    bad = Graph(np.zeros((5, 3), np.float32), ring(5))
    with pytest.raises(ValueError, match="graph.x"):
        fitted.decision_function(bad)


def test_alignment_bad_inputs():
    with pytest.raises(ValueError, match="edge_index"):
        align_features(np.ones((10, 3)), np.zeros((2, 0), np.int64), d=2)
    with pytest.raises(ValueError, match="d="):
        align_features(np.random.default_rng(0).normal(size=(10, 80)), ring(10), d=64)
