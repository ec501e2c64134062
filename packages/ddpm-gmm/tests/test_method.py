"""The paper's method: schedule, exact mixture score, DDPM coefficients and sampler, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_ddpm_gmm import GaussianMixture, alpha_bars, ddpm_coefficients, ddpm_sample, gmm_score, paper_schedule
from icml26_ddpm_gmm.method import check_betas, check_score_error, sample_chain
from scipy import special


@settings(deadline=None, max_examples=30)
@given(st.integers(9, 3000))  # c1 log T / T < 1 needs T >= 9 for c1 = 4
def test_paper_schedule_shape_and_range(T):
    betas = paper_schedule(T)
    rate = 4 * np.log(T) / T
    assert betas.shape == (T,)
    assert betas[0] == pytest.approx(T**-2.0)
    assert ((betas > 0) & (betas <= rate + 1e-15)).all()
    assert (np.diff(betas[1:]) >= -1e-15).all()  # non-decreasing after beta_1, saturating at c1 log T / T


def test_paper_schedule_ends_near_noise():
    """abar_T is small enough that Y_T ~ N(0, I) is a good start: about T^{-2} for c0=2, c1=4."""
    for T in (50, 400):
        assert alpha_bars(paper_schedule(T))[-1] < 10 / T**1.5


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 10_000), st.floats(0.01, 0.99), st.sampled_from([0.5, 1.0, 2.0]))
def test_score_is_gradient_of_log_density(seed, abar, sigma):
    """gmm_score equals the central finite difference of log q_t (scipy), q_t = sum_k pi_k N(sqrt(abar) mu_k, v I),
    v = abar sigma^2 + 1 - abar; fixed shapes K=3, d=2 so that jax compiles once."""
    rng = np.random.default_rng(seed)
    mixture = GaussianMixture(rng.dirichlet(np.ones(3)), rng.normal(0, 2, (3, 2)), sigma)
    x = rng.normal(0, 2, 2)
    v = abar * sigma**2 + 1 - abar

    def log_q(y):
        sq = ((y[None, :] - np.sqrt(abar) * mixture.means) ** 2).sum(1)
        return special.logsumexp(np.log(mixture.weights) - sq / (2 * v))

    step = 1e-5
    expected = [(log_q(x + step * e) - log_q(x - step * e)) / (2 * step) for e in np.eye(2)]
    with jax.enable_x64(True):
        got = gmm_score(jnp.asarray(x), abar, mixture.weights, mixture.means, sigma)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-6)


def test_score_weights_ignore_orthogonal_part():
    """For sigma = 1 the score minus (-x) lies in span{mu_k}: the orthogonal part is exactly -x_perp."""
    mixture = GaussianMixture(np.array([0.3, 0.7]), np.array([[2.0, 0, 0], [-1.0, 0, 0]]))
    x = jnp.array([[0.4, 5.0, -3.0]])
    s = gmm_score(x, 0.5, mixture.weights, mixture.means, 1.0)
    np.testing.assert_allclose(np.asarray(s)[0, 1:], [-5.0, 3.0], rtol=1e-6)


def test_ddpm_variance_recursion_matches_spec_formula():
    """One DDPM step on N(0, v_t) gives v_{t-1} + beta_t^2 (1/v_t - 1)/alpha_t (zero iff v_t = 1)."""
    betas = paper_schedule(20)
    c = ddpm_coefficients(betas)
    alpha = 1 - betas
    for v in (0.25, 1.0, 4.0):
        got = (c.a - c.b / v) ** 2 * v + c.sigma**2
        np.testing.assert_allclose(got, (v - betas) / alpha + betas**2 * (1 / v - 1) / alpha, rtol=1e-12)


def test_posterior_variance_is_smaller():
    betas = paper_schedule(100)
    assert (ddpm_coefficients(betas, "posterior").sigma <= ddpm_coefficients(betas).sigma + 1e-15).all()


def test_sampler_on_single_gaussian_matches_target_moments():
    """A single N(mu, I) is sampled exactly by DDPM up to the start error: mean ~ mu, covariance ~ I."""
    mu = np.array([3.0, -1.0])
    mixture = GaussianMixture(np.array([1.0]), mu[None, :])
    y = np.asarray(ddpm_sample(jax.random.key(0), mixture, paper_schedule(50), 20_000))
    assert y.shape == (20_000, 2)
    np.testing.assert_allclose(y.mean(0), mu, atol=0.05)
    np.testing.assert_allclose(np.cov(y.T), np.eye(2), atol=0.05)


def test_score_error_shifts_samples():
    mixture = GaussianMixture(np.array([1.0]), np.zeros((1, 2)))
    betas = paper_schedule(50)
    key = jax.random.key(1)
    clean = np.asarray(ddpm_sample(key, mixture, betas, 4000)).mean(0)
    biased = np.asarray(ddpm_sample(key, mixture, betas, 4000, eps_score=0.5, direction=[0.0, 1.0])).mean(0)
    assert biased[1] - clean[1] > 0.3 and abs(biased[0] - clean[0]) < 1e-4


GOOD = {"weights": np.array([0.5, 0.5]), "means": np.zeros((2, 2))}


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"weights": np.array([1.5, -0.5])}, "weights"),
        ({"weights": np.array([0.5, 0.6])}, "weights"),
        ({"means": np.zeros((3, 2))}, "means"),
        ({"means": np.zeros(2)}, "means"),
        ({"sigma": 0.0}, "sigma"),
    ],
)
def test_mixture_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        GaussianMixture(**{**GOOD, **kwargs})


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: paper_schedule(1), "T"),
        (lambda: paper_schedule(100, c0=0.0), "c0"),
        (lambda: paper_schedule(100, c1=-1.0), "c1"),
        (lambda: paper_schedule(10, c1=10.0), "c1"),
        (lambda: check_betas([0.1, 0.0]), "betas"),
        (lambda: check_betas([0.1, 1.0]), "betas"),
        (lambda: ddpm_coefficients([0.1], variance="large"), "variance"),
        (lambda: check_score_error(-0.1, None, 2), "eps_score"),
        (lambda: check_score_error(0.1, [1.0, 0, 0], 2), "direction"),
        (lambda: check_score_error(0.1, [0.0, 0.0], 2), "direction"),
        (lambda: ddpm_sample(jax.random.key(0), GaussianMixture(**GOOD), [0.1, 0.2], 0), "n"),
        (
            lambda: sample_chain(jax.random.key(0), GaussianMixture(**GOOD), [0.1], 2, ddpm_coefficients([0.1, 0.2])),
            "coefficients",
        ),
    ],
)
def test_rejects_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
