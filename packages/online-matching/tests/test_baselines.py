"""Baselines against brute force and their defining properties."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_online_matching import GreedyPolicy, StatusQuoPolicy, omniscient_optimum, simulate


def brute_force(W):
    """Max-weight matching of rows to columns by enumerating injections of the rows (tiny inputs only)."""
    T, n = W.shape
    best = 0.0
    for cols in itertools.permutations(range(n + T), T):  # columns >= n mean "unmatched"
        best = max(best, sum(W[i, c] for i, c in enumerate(cols) if c < n))
    return best


@settings(deadline=None, max_examples=20)
@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(1, 3))
def test_omniscient_optimum_matches_brute_force(seed, T, n):
    rng = np.random.default_rng(seed)
    W = rng.uniform(0, 1, (T, n)) * (rng.random((T, n)) < 0.6)
    value, match = omniscient_optimum(W)
    assert np.isclose(value, brute_force(W))
    matched = match[match >= 0]
    assert len(set(matched)) == len(matched)


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_online_policies_never_beat_the_omniscient_optimum(seed):
    rng = np.random.default_rng(seed)
    W = rng.uniform(0, 1, (8, 6)) * (rng.random((8, 6)) < 0.5)
    opt, _ = omniscient_optimum(W)
    types = np.zeros(8, dtype=int)
    for policy in (GreedyPolicy(), StatusQuoPolicy(rng.integers(1, 7, 6), rng.uniform(0, 100, 6))):
        value, match = simulate(policy, W, types, rng)
        assert value <= opt + 1e-9
        assert len(set(match[match >= 0])) == (match >= 0).sum()


def test_greedy_is_half_competitive_on_its_worst_case():
    """The classic instance: greedy takes the 1 + eps edge and blocks the second arrival's only edge."""
    W = np.array([[1.01, 1.0], [1.0, 0.0]])
    value, _ = simulate(GreedyPolicy(), W, np.zeros(2, dtype=int), np.random.default_rng(0))
    assert np.isclose(value / omniscient_optimum(W)[0], 1.01 / 2.0)


def test_status_quo_prefers_urgency_then_waiting_time():
    policy = StatusQuoPolicy(tier=np.array([3, 1, 1, 2]), waited=np.array([900.0, 10.0, 50.0, 500.0]))
    w_row = np.array([5.0, 0.0, 0.1, 9.0])  # patient 1 is incompatible (w = 0)
    assert policy.decide(0, 0, w_row, np.ones(4, dtype=bool), None) == 2
    assert policy.decide(0, 0, w_row, np.array([True, True, False, True]), None) == 3


def test_departed_patients_are_never_chosen():
    W = np.ones((2, 2))
    present = np.array([[False, True], [False, True]])
    _, match = simulate(GreedyPolicy(), W, np.zeros(2, dtype=int), np.random.default_rng(0), present)
    assert match.tolist() == [1, -1]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: omniscient_optimum(np.array([[1.0, -1.0]])), "W"),
        (lambda: omniscient_optimum(np.array([[np.nan]])), "W"),
        (lambda: simulate(GreedyPolicy(), np.ones((2, 2)), np.zeros(3, dtype=int), None), "types"),
        (lambda: StatusQuoPolicy(np.array([1, 2]), np.array([1.0])), "waited"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        call()
