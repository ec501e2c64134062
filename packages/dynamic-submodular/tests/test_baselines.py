import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_dynamic_submodular import (
    INSERT,
    Cardinality,
    Coverage,
    DynamicConsistent,
    LazyRepair,
    PartitionMatroid,
    RecomputeGreedy,
    SetFunction,
    SwapStreaming,
    adversarial_stream,
    brute_force_opt,
    greedy,
    random_set_system,
    random_stream,
)


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000))
def test_recompute_greedy_is_greedy_on_the_active_set(seed):
    rng = np.random.default_rng(seed)
    f = Coverage(random_set_system(20, 40, 4.0, rng))
    k = Cardinality(4)
    algorithm = RecomputeGreedy(f, k)
    for op, e in zip(*random_stream(20, 60, 0.3, rng), strict=True):
        algorithm.update(int(op), int(e))
        assert algorithm.solution == greedy(f, k, sorted(algorithm.active))


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000), st.booleans())
def test_lazy_and_swap_change_at_most_two_per_step(seed, matroid):
    rng = np.random.default_rng(seed)
    f = Coverage(random_set_system(30, 50, 5.0, rng))
    constraint = PartitionMatroid(np.arange(30) % 3, np.array([1, 2, 2])) if matroid else Cardinality(5)
    stream = adversarial_stream(f, constraint, 120, 0.3, 3, rng)
    for algorithm in (LazyRepair(f, constraint), SwapStreaming(f, constraint)):
        for op, e in zip(*stream, strict=True):
            assert algorithm.update(int(op), int(e)) <= 2
            assert constraint.independent(algorithm.solution)


def test_an_arrival_in_a_capacity_zero_class_is_rejected():
    """Issue 16.4: a class of capacity 0 (accepted by PartitionMatroid) used to crash SwapStreaming."""
    f = Coverage(np.eye(2, dtype=int))
    constraint = PartitionMatroid(np.array([0, 1]), np.array([0, 1]))
    algorithms = (SwapStreaming, LazyRepair, RecomputeGreedy, DynamicConsistent)
    for algorithm in (make(f, constraint) for make in algorithms):
        assert algorithm.update(INSERT, 1) == 1 and algorithm.solution == [1]
        assert algorithm.update(INSERT, 0) == 0 and algorithm.solution == [1]  # class 0 holds nothing


def test_swap_streaming_preempts_only_at_twice_the_weight():
    w = np.array([1.0, 1.5, 2.0, 5.0])
    f = SetFunction(4, lambda S: float(sum(w[list(S)])))
    algorithm = SwapStreaming(f, Cardinality(1))
    algorithm.update(INSERT, 0)
    algorithm.update(INSERT, 1)  # 1.5 < 2 * 1.0: kept out
    assert algorithm.solution == [0]
    algorithm.update(INSERT, 2)  # 2.0 >= 2 * 1.0: swapped in
    assert algorithm.solution == [2]
    algorithm.update(INSERT, 3)
    assert algorithm.solution == [3]


def test_lazy_repair_keeps_a_full_solution_and_ignores_better_newcomers():
    w = np.array([1.0, 1.0, 9.0])
    f = SetFunction(3, lambda S: float(sum(w[list(S)])))
    algorithm = LazyRepair(f, Cardinality(2))
    for e in range(3):
        algorithm.update(INSERT, e)
    assert sorted(algorithm.solution) == [0, 1]


def test_brute_force_matches_enumeration():
    rng = np.random.default_rng(0)
    f = Coverage(random_set_system(8, 15, 3.0, rng))
    value, best = brute_force_opt(f, Cardinality(2), range(8))
    assert value == max(f.value([a, b]) for a in range(8) for b in range(a + 1, 8))
    assert f.value(best) == value


def test_bad_brute_force_size():
    f = Coverage(random_set_system(30, 10, 2.0, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="active"):
        brute_force_opt(f, Cardinality(2), range(30))
