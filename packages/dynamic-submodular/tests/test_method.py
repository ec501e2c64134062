import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_dynamic_submodular import (
    DELETE,
    INSERT,
    Cardinality,
    Coverage,
    DynamicConsistent,
    PartitionMatroid,
    SetFunction,
    adversarial_stream,
    brute_force_opt,
    greedy,
    random_set_system,
    random_stream,
)


def _run(algorithm, stream):
    changes = []
    for op, e in zip(*stream, strict=True):
        changes.append(algorithm.update(int(op), int(e)))
        assert set(algorithm.solution) <= algorithm.active
        assert algorithm.constraint.independent(algorithm.solution)
    return np.array(changes)


def test_greedy_is_optimal_for_a_modular_function_under_a_matroid():
    w = np.random.default_rng(0).uniform(0.1, 1.0, size=10)
    f = SetFunction(10, lambda S: float(sum(w[list(S)])))
    matroid = PartitionMatroid(np.arange(10) % 3, np.array([2, 1, 2]))
    assert f.value(greedy(f, matroid, range(10))) == pytest.approx(brute_force_opt(f, matroid, range(10))[0])


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 10_000), st.integers(1, 4))
def test_greedy_reaches_one_minus_one_over_e_of_opt(seed, k):
    f = Coverage(random_set_system(10, 25, 4.0, np.random.default_rng(seed)))
    opt, _ = brute_force_opt(f, Cardinality(k), range(10))
    assert f.value(greedy(f, Cardinality(k), range(10))) >= (1 - 1 / math.e) * opt - 1e-9


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 10_000), st.integers(2, 24), st.sampled_from([0.2, 0.35, 0.5, 0.8]))
def test_bound_is_order_log_k_over_eps_squared(seed, k, eps):
    f = Coverage(random_set_system(k, 5, 2.0, np.random.default_rng(seed)))
    card = DynamicConsistent(f, Cardinality(k), eps, validate=False)
    assert card.bound <= 2 + 2 * math.ceil(1 / eps**2)  # one level: O(1/eps^2)
    labels = np.arange(k) % 2
    matroid = DynamicConsistent(f, PartitionMatroid(labels, np.array([k, k])), eps, validate=False)
    levels = math.ceil(math.log2(k)) + 1
    assert len(matroid.blocks) == levels and matroid.blocks[0] == k and matroid.blocks[-1] == 1
    assert matroid.bound <= 2 + 2 * levels * math.ceil(1 / eps**2)  # O(log k / eps^2)


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000), st.sampled_from([0.3, 0.5, 0.9]), st.booleans())
def test_feasible_and_within_bound_on_every_step(seed, eps, adversarial):
    rng = np.random.default_rng(seed)
    f = Coverage(random_set_system(40, 60, 5.0, rng))
    k = Cardinality(8)
    stream = adversarial_stream(f, k, 150, 0.3, 3, rng) if adversarial else random_stream(40, 150, 0.3, rng)
    ours = DynamicConsistent(f, k, eps, seed=seed)
    changes = _run(ours, stream)
    assert changes.max() <= ours.bound
    assert ours.rebuilds > 0


def test_matroid_run_is_feasible_within_bound():
    rng = np.random.default_rng(0)
    f = Coverage(random_set_system(30, 50, 5.0, rng))
    matroid = PartitionMatroid(np.arange(30) % 3, np.array([1, 2, 3]))
    ours = DynamicConsistent(f, matroid, 0.5, seed=1)
    assert _run(ours, random_stream(30, 200, 0.3, rng)).max() <= ours.bound


def test_value_against_brute_force_optimum_on_small_instances():
    ratios = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        f = Coverage(random_set_system(12, 30, 4.0, rng))
        k = Cardinality(3)
        ours = DynamicConsistent(f, k, 0.5, seed=seed)
        for op, e in zip(*random_stream(12, 60, 0.3, rng), strict=True):
            ours.update(int(op), int(e))
            opt, _ = brute_force_opt(f, k, ours.active)
            if opt > 0:
                ratios.append(ours.value() / opt)
    assert np.mean(ratios) >= 0.5  # 1/2 - O(eps) in expectation; a statistic, not a per-step guarantee


def test_small_eps_with_one_window_step_is_recompute_like():
    rng = np.random.default_rng(0)
    f = Coverage(random_set_system(20, 40, 4.0, rng))
    ours = DynamicConsistent(f, Cardinality(4), eps=0.01, seed=0)
    assert ours.windows == [1] and ours.epochs == [1] and ours.bound == 2 + 2 * 4


def test_deleted_element_leaves_the_solution_at_once(coverage):
    ours = DynamicConsistent(coverage, Cardinality(3), 0.5)
    for e in range(coverage.n):
        ours.update(INSERT, e)
    victim = ours.solution[0]
    ours.update(DELETE, victim)
    assert victim not in ours.solution and victim not in ours.target


# bad inputs: one test per validated argument
@pytest.mark.parametrize("eps", [0.0, -0.1, 1.0, float("nan"), "0.5"])
def test_bad_eps(coverage, eps):
    with pytest.raises(ValueError, match="eps"):
        DynamicConsistent(coverage, Cardinality(3), eps)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k="):
        Cardinality(k)


def test_bad_levels(coverage):
    with pytest.raises(ValueError, match="levels"):
        DynamicConsistent(coverage, Cardinality(4), 0.5, levels=0)


def test_bad_element_operations(coverage):
    ours = DynamicConsistent(coverage, Cardinality(3), 0.5)
    with pytest.raises(ValueError, match="e=3"):
        ours.update(DELETE, 3)  # deleting an element not present
    ours.update(INSERT, 3)
    with pytest.raises(ValueError, match="e=3"):
        ours.update(INSERT, 3)  # inserting a duplicate
    with pytest.raises(ValueError, match="e="):
        ours.update(INSERT, coverage.n)
    with pytest.raises(ValueError, match="op"):
        ours.update(0, 4)


def test_bad_oracle_and_constraint(coverage):
    with pytest.raises(ValueError, match="f="):
        DynamicConsistent(lambda S: 0.0, Cardinality(3))
    with pytest.raises(ValueError, match="constraint"):
        DynamicConsistent(coverage, 3)
    with pytest.raises(ValueError, match="f="):  # detected on the sample the check draws
        DynamicConsistent(SetFunction(6, lambda S: float(len(S)) ** 2), Cardinality(2))


def test_bad_labels_and_capacities(coverage):
    with pytest.raises(ValueError, match="labels"):
        PartitionMatroid(np.array([0, -1]), np.array([1, 1]))
    with pytest.raises(ValueError, match="labels"):
        PartitionMatroid(np.array([0, 2]), np.array([1, 1]))
    with pytest.raises(ValueError, match="capacities"):
        PartitionMatroid(np.array([0, 1]), np.array([1, -1]))
    with pytest.raises(ValueError, match="labels"):  # one label per element of the ground set
        DynamicConsistent(coverage, PartitionMatroid(np.array([0, 1]), np.array([1, 1])))
