import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_logic_tying import method


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 20), st.integers(1, 5))
def test_norms_are_nonnegative(n, d):
    assert (method(np.random.default_rng(n).normal(size=(n, d))) >= 0).all()


def test_rejects_nan():
    with pytest.raises(ValueError, match="x="):
        method(np.array([[np.nan]]))
