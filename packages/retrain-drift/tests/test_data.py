"""Targets: the 1-D mixture (density, diffused score) and the 2-D ring."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_retrain_drift import grid_density, make_grid, mixture_density, ring_sample


@settings(deadline=None)
@given(st.floats(0.0, 5.0))
def test_diffused_mixture_is_a_density_with_the_right_score(t):
    x = make_grid(12.0, 2000)
    dx = x[1] - x[0]
    p, score = mixture_density(x, t=t)
    assert np.isclose(p.sum() * dx, 1.0, atol=1e-6)
    inner = slice(600, 1400)
    assert np.allclose(np.gradient(np.log(p), dx)[inner], score[inner], atol=1e-3)


def test_large_time_limit_is_standard_normal():
    x = make_grid(9.0, 512)
    p, score = mixture_density(x, t=30.0)
    assert np.allclose(p, np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi), atol=1e-10)
    assert np.allclose(score, -x, atol=1e-8)


def test_ring_sample():
    pts = ring_sample(np.random.default_rng(0), 4000, modes=8, radius=2.0, std=0.1)
    assert pts.shape == (4000, 2)
    assert abs(np.linalg.norm(pts, axis=1).mean() - 2.0) < 0.02


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"weights": (0.5, 0.6, -0.1)}, "weights"),
        ({"weights": (0.5, 0.4, 0.2)}, "weights"),
        ({"stds": (1.0, 0.0, 1.0)}, "stds"),
        ({"means": (0.0, 1.0)}, "means"),
        ({"t": -1.0}, "t"),
    ],
)
def test_bad_mixtures(kwargs, name):
    with pytest.raises(ValueError, match=name):
        mixture_density(np.zeros(4), **kwargs)


def test_bad_grids_and_rings():
    with pytest.raises(ValueError, match="n"):
        make_grid(9.0, 8)
    with pytest.raises(ValueError, match="half_width"):
        make_grid(0.0, 64)
    with pytest.raises(ValueError, match="modes"):
        ring_sample(np.random.default_rng(0), 10, modes=0)
    with pytest.raises(ValueError, match="radius"):
        ring_sample(np.random.default_rng(0), 10, radius=-1.0)
    assert np.isclose(grid_density(make_grid()).sum() * 18 / 512, 1.0)
