"""The estimator and the tests: identities, invariants, detection of a clear effect, bad inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_sinkhorn_te import (
    aggregated_sinkhorn_test,
    ipw_counterfactual_laws,
    one_step_ste,
    simulate,
    sinkhorn_divergence,
    sinkhorn_test,
)
from icml26_sinkhorn_te.treatment_effect import max_z_test
from scipy.stats import norm


def data(theta=0.0, n=120, seed=0):
    return simulate(n, theta, np.random.default_rng(seed))


@settings(deadline=None, max_examples=8)
@given(st.integers(0, 10_000))
def test_ipw_laws_are_probability_vectors_proportional_to_inverse_propensities(seed):
    Y, A, X = data(seed=seed, n=80)
    laws = ipw_counterfactual_laws(Y, A, X, seed=seed)
    assert laws.w1.sum() == pytest.approx(1.0) and laws.w0.sum() == pytest.approx(1.0)
    assert len(laws.y1) == A.sum() and len(laws.y0) == len(A) - A.sum()
    ratio1 = laws.w1 * laws.pi[A == 1]  # w_i pi(X_i) is constant within the treated arm
    ratio0 = laws.w0 * (1 - laws.pi[A == 0])
    assert np.ptp(ratio1) < 1e-12 and np.ptp(ratio0) < 1e-12


def test_one_step_is_plugin_plus_mean_influence_and_its_wald_interval():
    Y, A, X = data(theta=1.0)
    res = one_step_ste(Y, A, X, eps=1.0, alpha=0.1)
    assert res.estimate == pytest.approx(res.plugin + res.influence.mean())
    assert res.se == pytest.approx(res.influence.std(ddof=1) / np.sqrt(len(A)))
    assert res.ci[1] - res.ci[0] == pytest.approx(2 * norm.ppf(0.95) * res.se)
    laws = ipw_counterfactual_laws(Y, A, X)
    assert res.plugin == pytest.approx(sinkhorn_divergence(laws.y1, laws.y0, 1.0, laws.w1, laws.w0).value)


def test_influence_function_vanishes_when_outcomes_do_not_depend_on_treatment_or_covariates():
    """With identical arm laws of a constant outcome, phi_a are constant and the EIF is exactly 0."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    A = np.tile([0, 1], 30)
    Y = np.ones((60, 2))
    res = one_step_ste(Y, A, X, eps=1.0)
    assert abs(res.plugin) < 1e-9
    np.testing.assert_allclose(res.influence, 0.0, atol=1e-6)


def test_tests_detect_a_large_distributional_effect():
    Y, A, X = data(theta=2.5, n=200)
    assert sinkhorn_test(Y, A, X, eps=1.0).reject
    agg = aggregated_sinkhorn_test(Y, A, X, [0.5, 2.0, 8.0])
    assert agg.reject and agg.p_value < 0.01 and agg.z.shape == (3,)


def test_aggregated_test_with_one_eps_is_the_fixed_eps_test():
    Y, A, X = data(theta=0.5)
    fixed = sinkhorn_test(Y, A, X, eps=2.0, seed=3)
    agg = aggregated_sinkhorn_test(Y, A, X, [2.0], seed=3)
    assert fixed.statistic == pytest.approx(agg.statistic) and fixed.p_value == pytest.approx(norm.sf(fixed.statistic))


def test_max_z_calibration_reduces_to_one_z_for_identical_columns():
    """Perfectly correlated statistics: max_j z_j = z_1, so the max-z p-value is the one-sided z p-value."""
    rng = np.random.default_rng(2)
    T = rng.normal(loc=0.15, size=(200, 1)) @ np.ones((1, 3))
    res = max_z_test(T, 0.05, seed=0)
    assert res.p_value == pytest.approx(norm.sf(res.z[0]), abs=2e-5)


def test_max_z_p_value_is_exact_for_independent_statistics():
    """Uncorrelated columns: P(max_j Z_j >= z) = 1 - Phi(z)^J exactly (up to the sample correlation)."""
    rng = np.random.default_rng(5)
    noise = rng.normal(size=(400, 3))
    T = np.linalg.qr(noise - noise.mean(axis=0))[0] + np.array([0.01, 0.02, 0.005])  # uncorrelated columns
    res = max_z_test(T, 0.05, seed=0)
    assert np.allclose(np.corrcoef(T, rowvar=False), np.eye(3), atol=1e-12)
    assert res.p_value == pytest.approx(1.0 - norm.cdf(res.z.max()) ** 3, abs=2e-5)


def test_max_z_p_value_agrees_with_the_monte_carlo_it_replaced():
    """Issue 19: the CDF p-value lies within 4 standard errors of the old 20,000-draw Monte Carlo one."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        base = rng.normal(size=(300, 4))
        T = base @ np.linalg.cholesky(np.full((4, 4), 0.6) + 0.4 * np.eye(4)).T + 0.12
        res = max_z_test(T, 0.05, seed=seed)
        null = rng.multivariate_normal(np.zeros(4), np.corrcoef(T, rowvar=False), 20_000)
        monte_carlo = ((null.max(axis=1) >= res.z.max()).sum() + 1) / 20_001
        assert abs(res.p_value - monte_carlo) <= 4 * np.sqrt(monte_carlo * (1 - monte_carlo) / 20_000) + 1e-4
        assert max_z_test(T, 0.05, seed=seed + 7).p_value == pytest.approx(res.p_value, abs=4e-5)  # no MC noise


@settings(deadline=None, max_examples=30)
@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(0, 1))
def test_max_z_p_value_is_a_probability_and_monotone_in_the_statistic(shift_a, shift_b, rho):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(100, 2))
    T = np.column_stack([base[:, 0], rho * base[:, 0] + np.sqrt(1 - rho**2) * base[:, 1]])
    shift = 0.01 * np.array([shift_a, shift_b])
    low = max_z_test(T + shift, 0.05, seed=1)
    high = max_z_test(T + shift + 0.3, 0.05, seed=1)
    assert 0 < low.p_value <= 1 and high.p_value <= low.p_value


def test_rejects_non_binary_treatment():
    Y, A, X = data()
    with pytest.raises(ValueError, match="A="):
        one_step_ste(Y, A * 2, X, eps=1.0)


def test_rejects_a_single_arm():
    Y, A, X = data()
    with pytest.raises(ValueError, match="A="):
        sinkhorn_test(Y, np.ones_like(A), X, eps=1.0)


def test_rejects_length_mismatch():
    Y, A, X = data()
    with pytest.raises(ValueError, match="Y="):
        one_step_ste(Y[:-1], A, X, eps=1.0)


def test_rejects_non_finite_covariates():
    Y, A, X = data()
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="X="):
        one_step_ste(Y, A, X, eps=1.0)


def test_rejects_bad_eps():
    Y, A, X = data()
    with pytest.raises(ValueError, match="eps="):
        one_step_ste(Y, A, X, eps=0.0)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5])
def test_rejects_alpha_outside_the_unit_interval(alpha):
    Y, A, X = data()
    with pytest.raises(ValueError, match="alpha="):
        sinkhorn_test(Y, A, X, eps=1.0, alpha=alpha)


@pytest.mark.parametrize("grid", [[], [1.0, -2.0]])
def test_rejects_bad_eps_grid(grid):
    Y, A, X = data()
    with pytest.raises(ValueError, match="eps_grid="):
        aggregated_sinkhorn_test(Y, A, X, grid)


@pytest.mark.parametrize("n_folds", [1, 10_000])
def test_rejects_bad_number_of_folds(n_folds):
    Y, A, X = data()
    with pytest.raises(ValueError, match="n_folds="):
        one_step_ste(Y, A, X, eps=1.0, n_folds=n_folds)


def test_rejects_negative_seed():
    Y, A, X = data()
    with pytest.raises(ValueError, match="seed="):
        sinkhorn_test(Y, A, X, eps=1.0, seed=-1)


def test_trimmed_propensities_warn():
    """Perfectly separated treatment (a positivity violation) is trimmed to the bounds with a warning."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 1)) * 5
    A = (X[:, 0] > 0).astype(int)
    Y = rng.normal(size=(80, 2))
    with pytest.warns(RuntimeWarning, match="positivity"):
        ipw_counterfactual_laws(Y, A, X)
