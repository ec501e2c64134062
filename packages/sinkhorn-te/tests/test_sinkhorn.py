"""The OT core: agreement with POT under matched conventions, limits, invariants, the Hessian kernel."""

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_sinkhorn_te import (
    HessianKernel,
    extend_potential,
    ot_eps,
    sinkhorn_divergence,
    sinkhorn_log,
    sinkhorn_symmetric,
    squared_distances,
)
from scipy.optimize import linear_sum_assignment


def clouds(seed, n=30, m=25, p=2):
    rng = np.random.default_rng(seed)
    a = rng.random(n) + 0.1
    return rng.normal(size=(n, p)), rng.normal(size=(m, p)) + 0.5, a / a.sum(), np.full(m, 1.0 / m)


def primal_value(plan, a, b, cost, eps):
    """<c, pi> + eps KL(pi || a x b): OT_eps computed from a plan (the paper's convention)."""
    return float((plan * cost).sum() + eps * (plan * np.log(plan / np.outer(a, b))).sum())


@pytest.mark.parametrize("eps", [0.3, 1.0, 5.0])
def test_matches_pot_log_sinkhorn(eps):
    x, y, a, b = clouds(0)
    cost = squared_distances(x, y)
    ours = sinkhorn_log(a, b, cost, eps, tol=1e-10)
    plan, log = ot.sinkhorn(a, b, cost, eps, method="sinkhorn_log", log=True, stopThr=1e-12, numItermax=100_000)
    assert ours.value == pytest.approx(primal_value(plan, a, b, cost, eps), rel=1e-7)
    our_plan = np.exp((ours.f[:, None] + ours.g[None, :] - cost) / eps) * np.outer(a, b)
    np.testing.assert_allclose(our_plan, plan, atol=1e-9)
    shift = ours.f - eps * (log["log_u"] - np.log(a))  # POT's u = a exp(f / eps) up to a constant
    assert np.ptp(shift) < 1e-6


def test_value_is_primal_value_of_own_plan():
    x, y, a, b = clouds(1)
    cost = squared_distances(x, y)
    res = sinkhorn_log(a, b, cost, 0.5, tol=1e-11)
    plan = np.exp((res.f[:, None] + res.g[None, :] - cost) / 0.5) * np.outer(a, b)
    np.testing.assert_allclose(plan.sum(1), a, atol=1e-10)
    np.testing.assert_allclose(plan.sum(0), b, atol=1e-10)
    assert res.value == pytest.approx(primal_value(plan, a, b, cost, 0.5), rel=1e-8)


def test_symmetric_solver_matches_general_solver():
    x, _, a, _ = clouds(2)
    cost = squared_distances(x, x)
    assert sinkhorn_symmetric(a, cost, 0.7, tol=1e-10).value == pytest.approx(
        sinkhorn_log(a, a, cost, 0.7, tol=1e-10).value, rel=1e-8
    )


def test_small_eps_limit_is_exact_ot():
    """OT_eps -> W_2^2 as eps -> 0; for n uniform points each side |OT_eps - W| <= eps log n (+ tolerance)."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    cost = squared_distances(x, y)
    rows, cols = linear_sum_assignment(cost)
    exact = cost[rows, cols].mean()
    for eps in (0.05, 0.01):
        assert abs(ot_eps(x, y, eps).value - exact) <= eps * np.log(8) + 1e-4


def test_large_eps_limit_is_mean_difference():
    """S_eps -> 1/2 MMD^2 with kernel -c, which for c = ||x - y||^2 is ||mean_a - mean_b||^2."""
    x, y, a, b = clouds(4)
    gap = np.sum((a @ x - b @ y) ** 2)
    assert sinkhorn_divergence(x, y, 1e4, a, b).value == pytest.approx(gap, rel=1e-2)


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 10_000), st.floats(0.2, 5.0))
def test_divergence_is_symmetric_nonnegative_and_zero_on_the_diagonal(seed, eps):
    x, y, a, b = clouds(seed, n=12, m=10)
    s_xy = sinkhorn_divergence(x, y, eps, a, b).value
    assert s_xy == pytest.approx(sinkhorn_divergence(y, x, eps, b, a).value, rel=1e-5, abs=1e-8)
    assert s_xy >= -1e-8
    assert abs(sinkhorn_divergence(x, x, eps, a, a).value) < 1e-7


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000))
def test_first_variation_is_the_gradient(seed):
    """d/dt S_eps(a + t (a' - a), b) at t = 0 equals <phi_x, a' - a> (Feydy et al. 2019)."""
    x, y, a, b = clouds(seed, n=10, m=9)
    a2 = np.random.default_rng(seed + 1).random(10) + 0.1
    direction = a2 / a2.sum() - a
    eps, t = 0.8, 1e-5
    div = sinkhorn_divergence(x, y, eps, a, b)
    plus = sinkhorn_divergence(x, y, eps, a + t * direction, b).value
    minus = sinkhorn_divergence(x, y, eps, a - t * direction, b).value
    assert (plus - minus) / (2 * t) == pytest.approx(div.phi_x @ direction, rel=1e-3, abs=1e-6)


def test_extended_potential_reproduces_the_fixed_point():
    x, y, a, b = clouds(5)
    res = ot_eps(x, y, 0.6, a, b)
    np.testing.assert_allclose(extend_potential(x, y, b, res.g, 0.6), res.f, atol=1e-5)


def test_hessian_kernel_is_the_second_order_expansion_at_the_null():
    """S_eps(P(1 + t rho_1), P(1 + t rho_0)) / (t^2/2 <delta, h delta>) -> 1 as t -> 0."""
    rng = np.random.default_rng(6)
    m, eps = 30, 1.0
    y = rng.normal(size=(m, 2))
    h = HessianKernel.fit(y, eps)(y, y)
    rho1, rho0 = rng.normal(size=m), rng.normal(size=m)
    rho1, rho0 = rho1 - rho1.mean(), rho0 - rho0.mean()
    t = 0.01
    a, b = (1 + t * rho1) / m, (1 + t * rho0) / m
    exact = sinkhorn_divergence(y, y, eps, a, b).value
    assert exact / (0.5 * (a - b) @ h @ (a - b)) == pytest.approx(1.0, rel=5e-3)


def test_hessian_kernel_is_symmetric_psd_and_centred():
    y = np.random.default_rng(7).normal(size=(25, 2))
    h = HessianKernel.fit(y, 0.5)(y, y)
    np.testing.assert_allclose(h, h.T, atol=1e-8)
    assert np.linalg.eigvalsh(h).min() > -1e-6
    np.testing.assert_allclose(h.mean(axis=1), 0.0, atol=1e-5)  # constants are in its null space


def test_unconverged_sinkhorn_warns():
    x, y, a, b = clouds(8)
    with pytest.warns(RuntimeWarning, match="max_iter|iterations"):
        sinkhorn_log(a, b, squared_distances(x, y), 0.01, max_iter=2)


@pytest.mark.parametrize("eps", [0.0, -1.0, np.nan])
def test_rejects_bad_eps(eps):
    x, y, _, _ = clouds(0)
    with pytest.raises(ValueError, match="eps="):
        ot_eps(x, y, eps)


def test_rejects_bad_weights():
    x, y, a, _ = clouds(0)
    with pytest.raises(ValueError, match="a="):
        ot_eps(x, y, 1.0, a * 2)
    with pytest.raises(ValueError, match="b="):
        ot_eps(x, y, 1.0, a, np.full(3, 1 / 3))


def test_rejects_non_finite_points():
    x, y, _, _ = clouds(0)
    x[0, 0] = np.nan
    with pytest.raises(ValueError, match="x="):
        sinkhorn_divergence(x, y, 1.0)


def test_rejects_dimension_mismatch():
    with pytest.raises(ValueError, match="y="):
        squared_distances(np.zeros((3, 2)), np.zeros((3, 3)))


def test_rejects_non_square_symmetric_cost():
    with pytest.raises(ValueError, match="cost="):
        sinkhorn_symmetric(np.full(3, 1 / 3), np.ones((3, 4)), 1.0)


def test_rejects_bad_max_iter():
    x, y, a, b = clouds(0)
    with pytest.raises(ValueError, match="max_iter="):
        sinkhorn_log(a, b, squared_distances(x, y), 1.0, max_iter=0)


def test_hessian_kernel_rejects_bad_support():
    with pytest.raises(ValueError, match="support="):
        HessianKernel.fit(np.zeros(5), 1.0)


def test_rejects_bad_tol():
    x, y, a, b = clouds(0)
    with pytest.raises(ValueError, match="tol="):
        sinkhorn_log(a, b, squared_distances(x, y), 1.0, tol=0.0)


def test_hessian_kernel_rejects_bad_evaluation_points():
    kernel = HessianKernel.fit(np.random.default_rng(0).normal(size=(10, 2)), 1.0)
    with pytest.raises(ValueError, match="z="):
        kernel(np.full((3, 2), np.nan), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="w="):
        kernel(np.zeros((3, 2)), np.zeros(2))


def test_extend_potential_rejects_mismatched_potential():
    x, y, _, b = clouds(0)
    with pytest.raises(ValueError, match="h="):
        extend_potential(x, y, b, np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="weights="):
        extend_potential(x, y, b[:-1], np.zeros(len(y)), 1.0)
