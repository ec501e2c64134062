import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_shared import (
    check_array,
    check_choice,
    check_closed_interval,
    check_int,
    check_number,
    check_open_interval,
    check_positive,
    check_same_length,
)


@pytest.mark.parametrize("bad", [0.0, -1, float("nan"), float("inf"), "1", True, None])
def test_check_positive_rejects(bad):
    with pytest.raises(ValueError, match=r"eps=.*expected"):
        check_positive("eps", bad)


@settings(deadline=None)
@given(st.floats(min_value=1e-300, max_value=1e300))
def test_check_positive_accepts_positive_floats(x):
    assert check_positive("eps", x) == x


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.5, 2.0])
def test_alpha_outside_open_unit_interval(bad):
    with pytest.raises(ValueError, match=r"alpha=.*open interval \(0, 1\)"):
        check_open_interval("alpha", bad, 0, 1)
    with pytest.raises(ValueError, match=r"alpha=nan: expected a finite number"):
        check_open_interval("alpha", float("nan"), 0, 1)


def test_closed_interval_keeps_endpoints():
    assert check_closed_interval("p", 1.0, 0, 1) == 1.0
    with pytest.raises(ValueError, match="p="):
        check_closed_interval("p", 1.01, 0, 1)


def test_check_int():
    assert check_int("k", np.int64(3), 1) == 3
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match="k="):
            check_int("k", bad, 1)


def test_check_number_and_choice():
    assert math.isclose(check_number("x", np.float32(1.5)), 1.5)
    with pytest.raises(ValueError, match=r"executor='ssh': expected one of \['local', 'slurm'\]"):
        check_choice("executor", "ssh", ["local", "slurm"])


def test_check_array_shapes_and_values():
    assert check_array("x", [[1, 2]], ndim=2).shape == (1, 2)
    with pytest.raises(ValueError, match="x=.*ndim"):
        check_array("x", [1, 2], ndim=2)
    with pytest.raises(ValueError, match="x=.*NaN"):
        check_array("x", [1.0, np.nan])
    with pytest.raises(ValueError, match="x=.*non-empty"):
        check_array("x", [])
    with pytest.raises(ValueError, match="x=.*numeric"):
        check_array("x", ["a"])
    assert np.isnan(check_array("x", [np.nan], finite=False)).all()


def test_check_same_length():
    assert check_same_length(x=[1, 2], y=[3, 4]) == 2
    with pytest.raises(ValueError, match=r"x, y: expected the same length"):
        check_same_length(x=[1, 2], y=[3])
