"""The coarsening, the fluid LP and the capacity-aware thresholds: invariants, closed forms, trusted references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_online_matching import (
    CoarsenedPolicy,
    coarsen,
    magician_gamma,
    magician_thresholds,
    representative,
    simulate,
    solve_fluid_lp,
)
from scipy.optimize import linear_sum_assignment


def profile(seed, n=12, K=4):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0, 5, (n, K)) * (rng.random((n, K)) < 0.7)
    return w, rng.dirichlet(np.ones(K))


def test_singletons_have_zero_intra_cluster_error():
    w, p = profile(0)
    c = coarsen(w, m=len(w), p=p)
    assert c.delta == 0 and c.delta_mean == 0 and (c.b == 1).all()
    np.testing.assert_allclose(c.w_bar[c.labels], w)


@settings(deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12))
def test_representative_weights_are_cluster_means(seed, m):
    w, p = profile(seed)
    c = coarsen(w, m=m, p=p, seed=seed)
    assert c.b.sum() == len(w) and (c.b >= 1).all()
    for j in range(c.m):
        np.testing.assert_allclose(c.w_bar[j], w[c.labels == j].mean(0))
    err = np.abs(w - c.w_bar[c.labels])
    assert np.isclose(c.delta, err.max()) and c.delta_mean <= c.delta + 1e-12


def test_one_cluster_error_is_spread_around_the_mean():
    w, p = profile(1)
    c = representative(w, np.zeros(len(w), dtype=int), p)
    assert np.isclose(c.delta, np.abs(w - w.mean(0)).max())


@settings(deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_fluid_lp_with_unit_capacities_equals_assignment(seed, n):
    """b_j = 1 and λ_t = 1: the bipartite matching polytope is integral, so the LP equals the assignment optimum."""
    w = np.random.default_rng(seed).uniform(0, 1, (n, n + 1))
    x = solve_fluid_lp(w, np.ones(n), np.ones(n + 1))
    rows, cols = linear_sum_assignment(w, maximize=True)
    assert np.isclose((w * x).sum(), w[rows, cols].sum(), atol=1e-7)


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_fluid_lp_is_feasible_and_closed_form_when_capacity_is_ample(seed):
    w, p = profile(seed, n=5, K=3)
    lam = 4 * p
    x = solve_fluid_lp(w, np.full(5, 100.0), lam)
    assert (x >= 0).all() and (x.sum(0) <= lam + 1e-8).all()
    assert np.isclose((w * x).sum(), (lam * w.max(0)).sum())  # every arrival goes to its best cluster


def test_fluid_lp_respects_upper_bounds():
    w, p = profile(2, n=4, K=3)
    upper = np.full((4, 3), 0.1)
    x = solve_fluid_lp(w, np.ones(4), 10 * p, upper=upper)
    assert (x <= upper + 1e-9).all()


@settings(deadline=None)
@given(st.integers(1, 12), st.floats(0.01, 1.0), st.integers(1, 60))
def test_magician_admits_every_proposal_with_probability_gamma(b, q, T):
    """Re-run the magician's own recursion: while feasible, P(admit) = γ_b exactly; θ never exceeds b - 1."""
    theta, r = magician_thresholds(np.array([q]), np.array([b]), T)
    gamma = magician_gamma(b)
    P = np.zeros(b + 1)
    P[0] = 1.0
    for i in range(T):
        th, rr = theta[i, 0], r[i, 0]
        assert 0 <= th <= b - 1
        admit = np.zeros(b + 1)
        admit[:th] = 1.0
        admit[th] = rr
        assert (P * admit).sum() <= gamma + 1e-9
        if P[:b].sum() >= gamma:  # the magician's invariant: enough mass below capacity
            assert np.isclose((P * admit).sum(), gamma)
        move = q * admit * P
        P = P - move
        P[1:] += move[:-1]
        assert P[b] >= -1e-12 and np.isclose(P.sum(), 1.0)


def test_gamma_limits():
    assert np.isclose(magician_gamma(1), 0.5)
    assert magician_gamma(10**8) > 0.9999
    assert np.all(np.diff(magician_gamma(np.arange(1, 50))) > 0)


def test_policy_never_overfills_a_cluster():
    w, p = profile(3, n=20, K=4)
    c = coarsen(w, m=4, p=p)
    rng = np.random.default_rng(0)
    types = rng.choice(4, size=30, p=p)
    W = w[:, types].T * rng.uniform(0.8, 1.2, (30, 20))
    policy = CoarsenedPolicy(c, p, T=30)
    _, match = simulate(policy, W, types, rng)
    used = np.bincount(c.labels[match[match >= 0]], minlength=c.m)
    assert (used <= c.b).all() and (used == policy.used).all()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda w, p: coarsen(-w, 2, p), "w"),
        (lambda w, p: coarsen(np.where(w > 0, np.nan, 0), 2, p), "w"),
        (lambda w, p: coarsen(w, 0, p), "m"),
        (lambda w, p: coarsen(w, len(w) + 1, p), "m"),
        (lambda w, p: coarsen(w, 2, p * 2), "p"),
        (lambda w, p: solve_fluid_lp(w, -np.ones(len(w)), p), "b"),
        (lambda w, p: solve_fluid_lp(w, np.ones(len(w)), -p), "lam"),
        (lambda w, p: solve_fluid_lp(w, np.ones(len(w)), p, upper=np.ones((1, 1))), "upper"),
        (lambda w, p: magician_thresholds(np.array([1.5]), np.array([2]), 3), "q"),
        (lambda w, p: magician_thresholds(np.array([0.5]), np.array([0]), 3), "b"),
        (lambda w, p: magician_thresholds(np.array([0.5]), np.array([2]), 0), "T"),
        (lambda w, p: CoarsenedPolicy(coarsen(w, 2, p), p, T=0), "T"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    w, p = profile(4)
    with pytest.raises(ValueError, match=f"^{name}="):
        call(w, p)
