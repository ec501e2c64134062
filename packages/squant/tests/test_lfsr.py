"""LFSRs: every offered width is maximal length (algebraic period, and the walked period where cheap)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_squant.lfsr import PRIMITIVE_TAPS, period, state_cycle, step, stream, walk_period


@pytest.mark.parametrize("K", sorted(PRIMITIVE_TAPS))
def test_every_width_is_maximal_length(K):
    assert period(PRIMITIVE_TAPS[K]) == (1 << K) - 1


@pytest.mark.parametrize("K", range(2, 17))
def test_walked_period_equals_algebraic_period(K):
    assert walk_period(K, seed=1) == period(PRIMITIVE_TAPS[K]) == (1 << K) - 1


def test_reducible_polynomial_is_not_maximal():
    # x^16 + x^15 + x + 1 = (x + 1)(x^15 + 1): the "primitive" polynomial of an unofficial SeedLM simulator
    assert period((16, 15, 1)) < (1 << 16) - 1
    assert period((4, 2)) < 15  # x^4 + x^2 + 1 = (x^2 + x + 1)^2


def test_cycle_visits_every_nonzero_state_once():
    cycle = state_cycle(10)
    assert sorted(cycle.tolist()) == list(range(1, 1 << 10))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.data())
def test_stream_follows_the_cycle(K, data):
    cycle = state_cycle(K)
    start = data.draw(st.integers(0, len(cycle) - 1))
    length = data.draw(st.integers(1, 40))
    expected = cycle[(start + np.arange(length)) % len(cycle)]
    np.testing.assert_array_equal(stream(int(cycle[start]), K, length), expected)


def test_vectorised_step_equals_scalar_step():
    states = np.arange(1, 1 << 8)
    np.testing.assert_array_equal(step(states, 8), [step(int(s), 8) for s in states])


@pytest.mark.parametrize("K", [0, 1, 33, 2.0, True])
def test_rejects_width_without_primitive_polynomial(K):
    with pytest.raises(ValueError, match="K="):
        state_cycle(K)


@pytest.mark.parametrize("seed", [0, 1 << 8, -3])
def test_rejects_seed_outside_nonzero_states(seed):
    with pytest.raises(ValueError, match="seed="):
        stream(seed, 8, 4)
    with pytest.raises(ValueError, match="seed="):
        walk_period(8, seed)


def test_rejects_bad_length():
    with pytest.raises(ValueError, match="length="):
        stream(1, 8, 0)


def _order_by_stepping(taps):
    """Brute force: multiply by x modulo the polynomial until the residue returns to 1."""
    K, poly = max(taps), sum(1 << t for t in taps) + 1
    value, n = 1, 0
    while n == 0 or value != 1:
        value <<= 1
        if value >> K & 1:
            value ^= poly
        n += 1
    return n


def test_period_of_a_reducible_polynomial_is_its_true_order():
    # issue 16.1: (16, 15, 1) walks a period of 30 from seed 1, and period() returned 0
    assert period((16, 15, 1)) == 30 == _order_by_stepping((16, 15, 1))


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(1, 11), min_size=1, max_size=4))
def test_period_equals_brute_force_order_for_any_taps(taps):
    taps = tuple(sorted(taps, reverse=True))
    assert period(taps) == _order_by_stepping(taps)


@pytest.mark.parametrize("taps", [(), (16, 16), (33, 1), (0,), (4.0, 1), [4, 3], (True,)])
def test_period_rejects_bad_taps(taps):
    with pytest.raises(ValueError, match="taps="):
        period(taps)
