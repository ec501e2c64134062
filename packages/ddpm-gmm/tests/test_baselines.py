"""Comparators: schedules, DDIM, probability-flow ODE, the numpy loop."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_ddpm_gmm import (
    GaussianMixture,
    alpha_bars,
    cosine_schedule,
    ddim_coefficients,
    ddpm_sample,
    linear_schedule,
    numpy_ddpm_sample,
    paper_schedule,
    probability_flow_coefficients,
    tv_1d,
)
from scipy import stats

MIX = GaussianMixture(np.array([0.4, 0.6]), np.array([[-2.0], [2.0]]))


def test_linear_schedule_is_ho_at_1000():
    betas = linear_schedule(1000)
    assert betas[0] == pytest.approx(1e-4) and betas[-1] == pytest.approx(0.02)


@settings(deadline=None, max_examples=30)
@given(st.integers(2, 2000))
def test_cosine_schedule_reaches_noise(T):
    abar = alpha_bars(cosine_schedule(T))
    assert (np.diff(abar) < 0).all() and abar[-1] < 1e-3


def test_ddim_and_pf_ode_are_deterministic_and_converge():
    for coefficients in (ddim_coefficients, probability_flow_coefficients):
        assert (coefficients(paper_schedule(10)).sigma == 0).all()
        tvs = [tv_1d(MIX, paper_schedule(T), coefficients(paper_schedule(T))) for T in (25, 100)]
        assert tvs[1] < tvs[0]


def test_ddim_on_unit_gaussian_maps_x0_prediction_exactly():
    """For q_t = N(sqrt(abar_t) mu, 1), DDIM's x0-prediction of a point x is mu + sqrt(abar_t) (x - sqrt(abar_t) mu)."""
    betas = paper_schedule(30)
    c = ddim_coefficients(betas)
    abar = alpha_bars(betas)
    abar_prev = np.concatenate([[1.0], abar[:-1]])
    mu, z = 1.5, 0.7
    x = np.sqrt(abar) * mu + z
    step = c.a * x + c.b * (np.sqrt(abar) * mu - x)
    np.testing.assert_allclose(
        step, np.sqrt(abar_prev) * (mu + np.sqrt(abar) * z) + np.sqrt(1 - abar_prev) * np.sqrt(1 - abar) * z
    )


def test_numpy_loop_matches_jax_sampler_in_law():
    """Two-sample KS along the means' line and across it: the two implementations sample one law."""
    u = np.array([0.6, 0.8])
    mixture = GaussianMixture(MIX.weights, np.outer(MIX.means[:, 0], u))
    betas = paper_schedule(25)
    y_np = numpy_ddpm_sample(np.random.default_rng(0), mixture, betas, 3000)
    y_jax = np.asarray(ddpm_sample(jax.random.key(0), mixture, betas, 3000), dtype=float)
    for direction in (u, np.array([-0.8, 0.6])):
        assert stats.ks_2samp(y_np @ direction, y_jax @ direction).pvalue > 1e-3


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: linear_schedule(0), "T"),
        (lambda: linear_schedule(10), "betas"),
        (lambda: linear_schedule(100, beta_start=-1.0), "beta_start"),
        (lambda: linear_schedule(100, beta_end=0.0), "beta_end"),
        (lambda: cosine_schedule(0), "T"),
        (lambda: cosine_schedule(10, s=0.0), "s"),
        (lambda: cosine_schedule(10, max_beta=1.0), "max_beta"),
        (lambda: numpy_ddpm_sample(np.random.default_rng(0), MIX, [0.1], 0), "n"),
    ],
)
def test_rejects_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
