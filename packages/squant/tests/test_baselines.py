"""Round-to-nearest per group and the SeedLM presets."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_squant.baselines import rtn_quantise, seedlm_config


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.integers(0, 1000))
def test_rtn_error_is_at_most_one_step(bits, seed):
    # half a step inside the grid; up to one step at the ends, where the rounded zero point shifts the grid
    W = np.random.default_rng(seed).normal(size=(3, 32))
    code = rtn_quantise(W, bits, 16)
    step = code.scale.astype(np.float64).repeat(16, axis=1)
    assert (np.abs(W - code.reconstruct()) <= step * (1 + 1e-3) + 1e-6).all()
    assert code.q.min() >= 0 and code.q.max() <= (1 << bits) - 1


def test_rtn_is_exact_on_grid_values():
    W = np.tile(np.arange(16.0) * 0.25 - 1.0, (2, 1))  # 16 levels exactly: 4 bits represent them
    np.testing.assert_allclose(rtn_quantise(W, 4, 16).reconstruct(), W, atol=1e-6)


def test_rtn_exact_bits():
    code = rtn_quantise(np.random.default_rng(0).normal(size=(4, 256)), 4, 128)
    assert code.total_bits == 4 * 256 * 4 + 8 * (16 + 4) + 72
    assert code.bits_per_weight == pytest.approx(4 + 20 / 128 + 72 / 1024)


def test_seedlm_published_settings():
    assert seedlm_config(4).bits_per_weight == 4.0 and seedlm_config(4).tile == (1, 8)
    assert seedlm_config(3).bits_per_weight == 3.0 and seedlm_config(3).P == 4


def test_rtn_rejects_bad_input():
    W = np.zeros((2, 12))
    with pytest.raises(ValueError, match="group="):
        rtn_quantise(W, 4, 8)
    with pytest.raises(ValueError, match="group="):
        rtn_quantise(W, 4, 0)
    with pytest.raises(ValueError, match="bits="):
        rtn_quantise(W, 1, 4)
    with pytest.raises(ValueError, match="W="):
        rtn_quantise(np.full((2, 4), np.inf), 4, 4)
    with pytest.raises(ValueError, match="bits="):
        seedlm_config(2)
