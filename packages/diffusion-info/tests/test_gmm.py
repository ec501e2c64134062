import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_diffusion_info import (
    GaussianMixture,
    VPSchedule,
    information_profile,
    kl_to_equilibrium,
    manifold_mixture,
    mutual_information,
    time_grid,
)
from scipy.stats import multivariate_normal

S = VPSchedule()


def small_mixture(seed=0, k=3, d=3):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, d, d))
    cov = a @ np.swapaxes(a, 1, 2) + 0.1 * np.eye(d)
    w = rng.dirichlet(np.ones(k))
    return GaussianMixture(w, 2 * rng.standard_normal((k, d)), cov)


def test_log_prob_matches_scipy():
    m = small_mixture()
    x = np.random.default_rng(1).standard_normal((7, 3))
    ref = np.log(
        sum(w * multivariate_normal(mu, c).pdf(x) for w, mu, c in zip(m.weights, m.means, m.covariances, strict=True))
    )
    assert np.allclose(m.log_prob(x), ref)


@given(st.integers(0, 1000), st.floats(0.01, 1.0))
def test_scores_are_gradients_of_log_densities(seed, t):
    m = small_mixture(seed).marginal(S, t)
    x = np.random.default_rng(seed).standard_normal((4, 3))
    labels = np.array([0, 1, 2, 0])
    s_cond, s_uncond = m.scores(x, labels)
    h = 1e-5
    for j in range(3):
        dx = np.zeros(3)
        dx[j] = h
        fd_u = (m.log_prob(x + dx) - m.log_prob(x - dx)) / (2 * h)
        lp = lambda y: m.component_log_prob(y)[np.arange(4), labels]  # noqa: E731
        fd_c = (lp(x + dx) - lp(x - dx)) / (2 * h)
        assert np.allclose(s_uncond[:, j], fd_u, atol=1e-4)
        assert np.allclose(s_cond[:, j], fd_c, atol=1e-4)


def test_marginal_is_the_forward_process():
    m = small_mixture()
    t = 0.3
    p = m.marginal(S, t)
    assert np.allclose(p.means, S.mu(t) * m.means)
    assert np.allclose(p.covariances, S.mu(t) ** 2 * m.covariances + S.std(t) ** 2 * np.eye(3))
    assert np.allclose(m.marginal(S, 0.0).covariances, m.covariances)


def test_kl_of_a_single_gaussian_matches_closed_form():
    cov = np.diag([0.5, 2.0])
    m = GaussianMixture([1.0], [[1.0, -1.0]], cov[None])
    exact = 0.5 * (np.trace(cov) + 2.0 - 2 - np.log(np.linalg.det(cov)))
    assert np.isclose(kl_to_equilibrium(m, 1.0, 200000, np.random.default_rng(0)), exact, atol=0.01)


def test_neural_entropy_and_mi_equal_their_kl_identities():
    # S_NN = KL(p_eps||p_eq) - KL(p_1||p_eq) and I = I(X_eps;C) - I(X_1;C) for exact scores
    rng = np.random.default_rng(0)
    m, _ = manifold_mixture(rng, n_classes=4, dim=6, radius=3.0, detail_var=0.05)
    t = time_grid(1e-4, 80)
    x0, labels = m.sample(4000, rng)
    profile = information_profile(S, t, x0, labels, lambda x, tt, c: m.marginal(S, tt).scores(x, c), rng)
    ends = [m.marginal(S, tt) for tt in (t[0], t[-1])]
    kl = [kl_to_equilibrium(e, 1.0, 40000, rng) for e in ends]
    mi = [mutual_information(e, 40000, rng) for e in ends]
    assert np.isclose(profile.neural_entropy, kl[0] - kl[1], rtol=0.03)
    assert np.isclose(profile.mutual_information, mi[0] - mi[1], rtol=0.05)
    assert np.isclose(profile.mutual_information_denoising, mi[0] - mi[1], rtol=0.1)


def test_low_pass_view_keeps_mi_and_loses_detail_entropy():
    rng = np.random.default_rng(2)
    m, basis = manifold_mixture(rng, n_classes=3, dim=5, radius=4.0)
    low = m.project(basis)
    assert low.dim == 2 and np.allclose(low.covariances, np.eye(2)[None])
    # the detail directions are class-independent: I is unchanged, the KL gains the detail terms
    assert np.isclose(mutual_information(m, 20000, rng), mutual_information(low, 20000, rng), atol=0.02)
    detail_kl = 3 * 0.5 * (1e-3 - 1 - np.log(1e-3))
    gap = kl_to_equilibrium(m, 1.0, 20000, rng) - kl_to_equilibrium(low, 1.0, 20000, rng)
    assert np.isclose(gap, detail_kl, rtol=0.02)


def test_separated_mixture_has_mi_log_k():
    m, _ = manifold_mixture(np.random.default_rng(0), n_classes=4, dim=4, radius=20.0)
    assert np.isclose(mutual_information(m, 5000, np.random.default_rng(1)), np.log(4), rtol=1e-3)


@pytest.mark.parametrize(
    ("weights", "name"),
    [([0.5, 0.6], "weights"), ([-0.5, 1.5], "weights")],
)
def test_rejects_bad_weights(weights, name):
    with pytest.raises(ValueError, match=f"{name}="):
        GaussianMixture(weights, np.zeros((2, 2)), np.stack([np.eye(2)] * 2))


def test_rejects_bad_covariances_and_means():
    with pytest.raises(ValueError, match="covariances=.*positive definite"):
        GaussianMixture([1.0], [[0.0, 0.0]], [np.diag([1.0, -1.0])])
    with pytest.raises(ValueError, match="covariances=.*symmetric"):
        GaussianMixture([1.0], [[0.0, 0.0]], [[[1.0, 0.5], [0.0, 1.0]]])
    with pytest.raises(ValueError, match="covariances="):
        GaussianMixture([1.0], [[0.0, 0.0]], np.eye(3)[None])
    with pytest.raises(ValueError, match="means="):
        GaussianMixture([1.0], np.zeros((2, 2)), np.eye(2)[None])


def test_rejects_bad_labels_points_times_and_basis():
    m = small_mixture()
    with pytest.raises(ValueError, match="labels="):
        m.scores(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="labels="):
        m.scores(np.zeros((2, 3)), np.array([0]))
    with pytest.raises(ValueError, match="x="):
        m.scores(np.zeros((2, 4)), np.array([0, 1]))
    with pytest.raises(ValueError, match="t="):
        m.marginal(S, 1.5)
    with pytest.raises(ValueError, match="basis="):
        m.project(np.ones((3, 1)))
    with pytest.raises(ValueError, match="detail_var="):
        manifold_mixture(np.random.default_rng(0), detail_var=0.0)
