"""The conditional Poisson planner: brute-force equivalences, invariants and bad inputs."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_zipmoe import CostModel, cps_inclusion, cps_weights, plan_cache, rank_popularity, scale_to_k
from icml26_zipmoe.planning import RATIO_FULL_MIN, expected_delay, layer_delay, poisson_binomial, weight_to_prob

COST = CostModel(sm_io=1.0, decompress=0.3, compression_ratio=0.45, num_chunks=5, tensors_per_expert=2, workers=2)


def brute_force_cps(w, k):
    """Inclusion probabilities of 'k of N, P(S) proportional to prod w_i' by enumerating every subset."""
    n = len(w)
    subsets = list(itertools.combinations(range(n), k))
    weights = np.array([np.prod([w[i] for i in s]) for s in subsets])
    pi = np.zeros(n)
    for s, weight in zip(subsets, weights, strict=True):
        pi[list(s)] += weight
    return pi / weights.sum()


@given(st.lists(st.floats(0.05, 5.0), min_size=3, max_size=7), st.integers(1, 3))
def test_cps_inclusion_matches_enumeration(w, k):
    k = min(k, len(w) - 1)
    np.testing.assert_allclose(cps_inclusion(np.array(w), k), brute_force_cps(w, k), rtol=1e-9)


@given(st.lists(st.floats(0.01, 1.0), min_size=4, max_size=10), st.integers(1, 3))
def test_cps_weights_reproduce_their_targets(freq, k):
    pi = scale_to_k(np.array(freq), k)
    assert pi.sum() == pytest.approx(k) and (pi <= 1).all()
    np.testing.assert_allclose(cps_inclusion(cps_weights(pi, k), k), pi, atol=1e-6)


def test_cps_matches_monte_carlo_of_conditioned_bernoullis():
    """CPS = independent Bernoulli(p_i) draws kept only when exactly k succeed."""
    pi = scale_to_k(np.array([8, 5, 3, 2, 1, 1, 0.5, 0.5]), 2)
    p = weight_to_prob(cps_weights(pi, 2))
    draws = np.random.default_rng(0).random((400_000, 8)) < p
    kept = draws[draws.sum(1) == 2]
    np.testing.assert_allclose(kept.mean(0), pi, atol=0.01)


def test_poisson_binomial_matches_binomial():
    from math import comb

    dist = poisson_binomial(np.full(5, 0.3))
    np.testing.assert_allclose(dist, [comb(5, j) * 0.3**j * 0.7 ** (5 - j) for j in range(6)])


def test_rank_popularity_sorts_per_layer_then_pools():
    trace = np.array([[[0, 1], [3, 2]], [[0, 2], [3, 1]], [[0, 1], [3, 0]]])  # (tokens, layers, k)
    freq = rank_popularity(trace, 4)
    assert freq.sum() == pytest.approx(1) and (np.diff(freq) <= 0).all()
    np.testing.assert_allclose(freq, np.array([3 + 3, 2 + 1, 1 + 1, 0 + 1]) / 12)


def test_layer_delay_limits():
    assert layer_delay(2, 2, 0, COST) == 0.0  # everything in full slots: nothing to load
    all_sm, all_miss = layer_delay(2, 0, 2, COST), layer_delay(2, 0, 0, COST)
    assert 0 < all_sm < all_miss  # an SM hit saves the SM read


def test_more_memory_never_increases_the_expected_delay_of_a_split():
    p = weight_to_prob(cps_weights(scale_to_k(np.linspace(2, 0.1, 16), 2), 2))
    assert expected_delay(p, 4, 4, 2, COST) <= expected_delay(p, 2, 4, 2, COST) <= expected_delay(p, 0, 4, 2, COST)


def test_plan_respects_budget_and_ratio_floor():
    freq = np.linspace(2, 0.1, 16)
    budget, elements = 4 * 2 * 1000.0, 1000
    plan = plan_cache(freq / freq.sum(), 2, budget, elements, COST)
    assert RATIO_FULL_MIN <= plan.ratio_full < 1
    assert 2 * elements * plan.n_full + elements * plan.n_sm <= budget and plan.n_full + plan.n_sm <= 16


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: cps_weights(np.array([0.5, 0.5, 0.5]), 2), "pi="),  # sums to 1.5, not k
        (lambda: cps_weights(np.array([1.5, 0.5, 0.0]), 2), "pi="),  # an entry above 1
        (lambda: scale_to_k(np.ones(4), 5), "k="),  # k > number of experts
        (lambda: scale_to_k(np.ones(4), 0), "k="),
        (lambda: plan_cache(np.ones(4) / 4, 2, 999.0, 1000, COST), "budget="),  # below one expert's SM plane
        (lambda: rank_popularity(np.array([[[0, 7]]]), 4), "trace="),
        (lambda: CostModel(0.0, 1.0, 0.5, 5, 2, 2), "sm_io="),
        (lambda: CostModel(1.0, 1.0, 0.5, 5, 2, 0), "workers="),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()
