"""Generated mixtures: shapes, collinearity, bad inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_ddpm_gmm.data import embed, random_collinear_mixture, random_direction, spaced_collinear_mixture
from icml26_ddpm_gmm.exact import line_of


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 1000), st.integers(1, 6), st.integers(1, 40))
def test_random_mixture_is_collinear(seed, K, d):
    mixture = random_collinear_mixture(np.random.default_rng(seed), K, d)
    u, a = line_of(mixture)
    assert mixture.means.shape == (K, d) and np.allclose(np.outer(a, u), mixture.means)
    assert mixture.weights.sum() == pytest.approx(1.0)


def test_spaced_and_embedded():
    rng = np.random.default_rng(0)
    base = spaced_collinear_mixture(rng, 4, 1, spacing=2.0)
    assert np.allclose(np.abs(np.diff(base.means[:, 0])), 2.0)
    u = random_direction(rng, 5)
    assert embed(base, u).means.shape == (4, 5) and np.linalg.norm(u) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda r: random_direction(r, 0), "d"),
        (lambda r: random_collinear_mixture(r, 0, 2), "K"),
        (lambda r: random_collinear_mixture(r, 2, 2, spread=0.0), "spread"),
        (lambda r: spaced_collinear_mixture(r, 2, 2, spacing=-1.0), "spacing"),
    ],
)
def test_rejects_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call(np.random.default_rng(0))
