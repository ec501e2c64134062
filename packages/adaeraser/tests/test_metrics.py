"""Scores of a removal: PSNR / SSIM closed forms, the object residual's limits, the paired sign-flip test."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_adaeraser import make_scenes, object_residual, paired_sign_test, psnr, ssim


def test_psnr_closed_form_and_region():
    truth = np.zeros((1, 3, 4, 4))
    result = truth.copy()
    result[0, :, 0, 0] = 0.2  # error only at pixel (0, 0)
    region = np.zeros((1, 4, 4))
    region[0, :2, :2] = 1
    assert psnr(result, truth, region)[0] == pytest.approx(10 * np.log10(4 / (0.04 / 4)))
    region2 = np.zeros((1, 4, 4))
    region2[0, 3, 3] = 1
    assert psnr(result, truth, region2)[0] == np.inf


def test_ssim_is_one_for_identical_images_and_lower_otherwise():
    s = make_scenes(2, 16, np.random.default_rng(1))
    assert ssim(s.background, s.background, s.mask) == pytest.approx([1.0, 1.0])
    assert (ssim(s.image, s.background, s.mask) < 0.9).all()


@settings(deadline=None, max_examples=20)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_object_residual_interpolates_between_background_and_source(seed, alpha):
    s = make_scenes(3, 16, np.random.default_rng(seed))
    blend = alpha * s.image + (1 - alpha) * s.background
    np.testing.assert_allclose(object_residual(blend, s.background, s.object_mask, s.object_color), alpha, atol=1e-5)


def test_paired_sign_test_matches_brute_force():
    d = np.array([0.5, -0.2, 1.0, 0.3, 0.1])
    flips = [np.mean(np.array(signs) * d) for signs in itertools.product([-1, 1], repeat=5)]
    assert paired_sign_test(d) == pytest.approx(np.mean(np.array(flips) >= d.mean() - 1e-12))
    assert paired_sign_test(np.full(30, 0.1) + np.linspace(0, 0.01, 30)) < 1e-3  # 30 positive pairs
    assert paired_sign_test(-np.abs(np.linspace(0.1, 1, 30))) > 0.99


def test_bad_metric_inputs():
    x = np.zeros((2, 3, 4, 4))
    with pytest.raises(ValueError, match="region="):
        psnr(x, x, np.zeros((2, 4, 4)))
    with pytest.raises(ValueError, match="result="):
        psnr(x[:1], x, np.ones((2, 4, 4)))
    with pytest.raises(ValueError, match="color="):
        object_residual(x, x, np.ones((2, 4, 4)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="differences="):
        paired_sign_test(np.array([1.0]))
