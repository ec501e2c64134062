"""Comparators and statistics: exact values on linear maps, agreement with scipy, bad inputs."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_diffusion_geometry import LinearGenerator
from icml26_diffusion_geometry.baselines import full_spectral_norm, image_high_frequency, output_sensitivity
from icml26_diffusion_geometry.statistics import auroc, bootstrap_p_value, spearman
from scipy.stats import mannwhitneyu

SHAPE = (1, 4, 4)


def test_full_spectral_norm_of_a_linear_map_is_its_top_singular_value():
    A = np.random.default_rng(0).normal(size=(16, 16))
    F = LinearGenerator(A, np.zeros(16), SHAPE)
    z = torch.zeros(3, *SHAPE, dtype=torch.float64)
    sigma = full_spectral_norm(F, z, iters=300, generator=torch.Generator().manual_seed(0))
    np.testing.assert_allclose(sigma.numpy(), np.linalg.svd(A, compute_uv=False)[0], rtol=1e-6)


def test_output_sensitivity_of_a_scaled_rotation_is_the_scale():
    Q = np.linalg.qr(np.random.default_rng(1).normal(size=(16, 16)))[0]
    F = LinearGenerator(2.5 * Q, np.ones(16), SHAPE)
    z = torch.randn(2, *SHAPE, dtype=torch.float64)
    np.testing.assert_allclose(output_sensitivity(F, z, eps=0.3, directions=4).numpy(), 2.5, rtol=1e-10)
    with pytest.raises(ValueError, match="directions="):
        output_sensitivity(F, z, directions=0)
    with pytest.raises(ValueError, match="eps="):
        output_sensitivity(F, z, eps=0.0)


def test_image_high_frequency_is_zero_on_constants_inside_and_positive_on_checkers():
    checker = torch.tensor((-1.0) ** np.add.outer(np.arange(6), np.arange(6)))[None, None]
    assert float(image_high_frequency(checker)[0]) > 1.0
    assert float(image_high_frequency(torch.zeros(1, 1, 5, 5))[0]) == 0.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.lists(st.integers(0, 5), min_size=1, max_size=12))
def test_auroc_is_mann_whitney_u_over_the_pairs(ood, ind):
    expected = mannwhitneyu(ood, ind).statistic / (len(ood) * len(ind))
    assert auroc(np.array(ood), np.array(ind)) == pytest.approx(expected, abs=1e-12)


def test_spearman_and_bootstrap():
    x = np.arange(20.0)
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert spearman(x, -x) == pytest.approx(-1.0)
    rng = np.random.default_rng(0)
    p, q = bootstrap_p_value(lambda idx: spearman(x[idx], x[idx] ** 3 + rng.normal(size=idx.size)), 20, 50, rng)
    assert p == 0.0 and q > 0.5
    with pytest.raises(ValueError, match="x, y"):
        spearman(x, x[:5])
    with pytest.raises(ValueError, match="ood_scores="):
        auroc(np.array([]), np.array([1.0]))
    with pytest.raises(ValueError, match="resamples="):
        bootstrap_p_value(lambda idx: 1.0, 5, 0, rng)
