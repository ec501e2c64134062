"""Analytic generators: construction checks and the structure their closed forms rely on."""

import numpy as np
import pytest
import torch
from icml26_diffusion_geometry import LinearGenerator, RankOneGenerator
from icml26_diffusion_geometry.analytic import detail_template, orthonormal_pair, smooth_template

SHAPE = (1, 8, 8)


def _pair():
    return orthonormal_pair(np.random.default_rng(0), 64)


def test_boundary_point_is_on_the_boundary_and_differences_are_multiples_of_the_template():
    rng = np.random.default_rng(1)
    u, v = _pair()
    T = smooth_template(rng, SHAPE)
    F = RankOneGenerator(np.zeros(SHAPE), T, u, v, c=1.3, profile="sigmoid", k=40.0)
    z = F.boundary_point(rng.normal(size=64))
    assert abs(float(F.g(z[None])[0])) < 1e-12
    out = F(torch.tensor(np.stack([z, z + 0.05 * rng.normal(size=64)])).reshape(2, *SHAPE)).numpy()
    np.testing.assert_allclose(out[0], 0.5 * T, atol=1e-12)  # sigmoid(0) = 1/2
    diff = (out[1] - out[0]).ravel()
    assert abs(diff @ T.ravel()) == pytest.approx(np.linalg.norm(diff) * np.linalg.norm(T), rel=1e-10)


def test_templates_have_the_intended_frequency_content():
    rng = np.random.default_rng(2)
    from icml26_diffusion_geometry.analytic import numpy_laplacian

    smooth, detail = smooth_template(rng, SHAPE), detail_template(rng, SHAPE)
    ratio = lambda t: numpy_laplacian(t).var() / np.mean(t**2)  # noqa: E731
    assert ratio(detail) > 10 * ratio(smooth)


def test_rejects_bad_generators():
    u, v = _pair()
    T = np.ones(SHAPE)
    with pytest.raises(ValueError, match="profile="):
        RankOneGenerator(np.zeros(SHAPE), T, u, v, profile="step")
    with pytest.raises(ValueError, match="k="):
        RankOneGenerator(np.zeros(SHAPE), T, u, v, profile="sigmoid", k=0.0)
    with pytest.raises(ValueError, match="u="):
        RankOneGenerator(np.zeros(SHAPE), T, u, u)
    with pytest.raises(ValueError, match="base="):
        RankOneGenerator(np.zeros((1, 4, 4)), T, u, v)
    with pytest.raises(ValueError, match="A="):
        LinearGenerator(np.ones((10, 64)), np.zeros(10), SHAPE)
