"""Binarised real data: the thermometer code and the digits split."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_logic_tying.data import load_digits_bits, thermometer


@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_thermometer_bits_are_monotone_and_count_the_thresholds_below(values):
    X = np.array([values])
    bits = thermometer(X, (0.25, 0.5, 0.75)).reshape(len(values), 3)
    assert np.all(bits[:, :-1] >= bits[:, 1:])  # a thermometer: once off, stays off
    assert np.array_equal(bits.sum(1), (np.array(values)[:, None] > np.array([0.25, 0.5, 0.75])).sum(1))


def test_digits_bits_shapes_and_split():
    X_train, _y_train, X_test, y_test = load_digits_bits()
    assert X_train.shape == (1438, 192) and X_test.shape == (359, 192) and X_train.dtype == bool
    assert set(np.unique(y_test)) == set(range(10))


def test_thermometer_rejects_bad_thresholds():
    with pytest.raises(ValueError, match="thresholds="):
        thermometer(np.zeros((2, 2)), (0.5, 0.25))
    with pytest.raises(ValueError, match="thresholds="):
        thermometer(np.zeros((2, 2)), (1.5,))
