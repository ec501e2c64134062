"""The think step: DepRound, Exp3.M (probabilities, capping, learning, regret), the greedy oracle."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_think_touch import Exp3M, GreedyOracle, RunningMax, dep_round, exp3m_gamma, make_strategy, regret_bound


@given(st.integers(1, 12), st.data())
def test_dep_round_returns_exactly_k_distinct_indices(G, data):
    k = data.draw(st.integers(1, G))
    raw = np.array(data.draw(st.lists(st.floats(0.01, 1.0), min_size=G, max_size=G)))
    p = Exp3M(G, k, gamma=0.5)
    p.log_w = np.log(raw)
    chosen = dep_round(p.potentials(), np.random.default_rng(0))
    assert chosen.size == k and len(set(chosen.tolist())) == k and (chosen < G).all()


def test_dep_round_marginals_match_p():
    p = np.array([0.9, 0.5, 0.3, 0.2, 0.1])  # sum 2
    rng = np.random.default_rng(1)
    counts = np.zeros(5)
    n = 10000
    for _ in range(n):
        counts[dep_round(p, rng)] += 1
    assert np.allclose(counts / n, p, atol=0.02)  # 4 standard errors at most


@given(st.integers(2, 12), st.data())
def test_exp3m_probabilities_sum_to_k_with_floor_and_cap(G, data):
    k = data.draw(st.integers(1, G - 1))
    gamma = data.draw(st.floats(0.01, 1.0))
    bandit = Exp3M(G, k, gamma)
    bandit.log_w = np.array(data.draw(st.lists(st.floats(-30, 30), min_size=G, max_size=G)))
    p = bandit.potentials()
    assert np.isclose(p.sum(), k)
    assert (p >= gamma * k / G - 1e-12).all() and (p <= 1 + 1e-9).all()  # exploration floor: coverage


def test_exp3m_caps_a_dominant_arm_at_probability_one():
    bandit = Exp3M(5, 2, gamma=0.1)
    bandit.log_w = np.array([50.0, 0.0, 0.0, 0.0, 0.0])
    p = bandit.potentials()
    assert np.isclose(p[0], 1.0) and np.allclose(p[1:], 0.25)


def test_exp3m_uniform_at_start():
    assert np.allclose(Exp3M(8, 2).potentials(), 0.25)


def test_exp3m_learns_the_best_k_set_with_regret_below_its_bound():
    means = np.array([0.9, 0.8, 0.2, 0.2, 0.1, 0.1])  # best 2-set {0, 1}
    G, k, T = 6, 2, 3000
    bandit = Exp3M(G, k, gamma=exp3m_gamma(T, G, k))
    rng = np.random.default_rng(0)
    total = 0.0
    for _ in range(T):
        chosen = bandit.choose(rng)
        rewards = (rng.random(k) < means[chosen]).astype(float)
        bandit.observe(chosen, rewards)
        total += rewards.sum()
    regret = T * means[:2].sum() - total
    assert regret < regret_bound(T, G, k)
    assert set(np.argsort(-bandit.potentials())[:2]) == {0, 1}


def test_greedy_oracle_is_the_brute_force_best_k_set():
    rng = np.random.default_rng(3)
    sq = rng.random(7)
    best = max(itertools.combinations(range(7), 3), key=lambda s: sq[list(s)].sum())
    assert GreedyOracle(7, 3).choose(rng, sq).tolist() == sorted(best)


def test_running_max_keeps_rewards_in_unit_interval():
    normalise = RunningMax(0.5)
    assert np.allclose(normalise(np.array([2.0, 4.0])), [0.5, 1.0])
    assert np.allclose(normalise(np.array([1.0])), [0.5])  # M = max(0.5 * 4, 1) = 2


def test_regret_bound_vanishes_when_every_group_is_selected():
    assert regret_bound(100, 4, 4) == 0.0 and exp3m_gamma(100, 4, 4) == 1.0


@pytest.mark.parametrize("k", [0, 9, -1])
def test_rejects_k_outside_1_to_G(k):
    with pytest.raises(ValueError, match="k="):
        Exp3M(8, k)


@pytest.mark.parametrize("gamma", [0.0, 1.5, float("nan")])
def test_rejects_gamma_outside_unit_interval(gamma):
    with pytest.raises(ValueError, match="gamma="):
        Exp3M(8, 2, gamma)


def test_rejects_non_finite_rewards():
    bandit = Exp3M(4, 2)
    chosen = bandit.choose(np.random.default_rng(0))
    with pytest.raises(ValueError, match="rewards="):
        bandit.observe(chosen, np.array([np.nan, 0.5]))


def test_rejects_rewards_above_one_and_of_wrong_shape():
    bandit = Exp3M(4, 2)
    chosen = bandit.choose(np.random.default_rng(0))
    with pytest.raises(ValueError, match="rewards="):
        bandit.observe(chosen, np.array([2.0, 0.5]))
    with pytest.raises(ValueError, match="rewards="):
        bandit.observe(chosen, np.array([0.5]))


def test_rejects_unknown_strategy_and_missing_gradients():
    with pytest.raises(ValueError, match="strategy="):
        make_strategy("oracle", 4, 2)
    with pytest.raises(ValueError, match="sq_norms="):
        GreedyOracle(4, 2).choose(np.random.default_rng(0), None)


def test_rejects_bad_dep_round_input():
    with pytest.raises(ValueError, match="p="):
        dep_round(np.array([0.5, 0.7]), np.random.default_rng(0))


def test_rejects_observe_before_choose():
    with pytest.raises(RuntimeError, match="before choose"):
        Exp3M(4, 2).observe(np.array([0, 1]), np.array([0.5, 0.5]))
