"""The attacker's filters: low-pass, Gaussian blur, JPEG."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_fuse import gaussian_blur, jpeg_compress, low_pass_filter


def images(n=4, seed=0):
    return torch.rand(n, 1, 16, 16, generator=torch.Generator().manual_seed(seed))


@given(st.floats(0.0, 2**0.5), st.integers(0, 50))
def test_low_pass_filter_returns_images(cutoff, seed):
    out = low_pass_filter(images(seed=seed), cutoff)
    assert out.shape == (4, 1, 16, 16) and out.min() >= 0 and out.max() <= 1


@given(st.floats(0.5, 5.0), st.floats(0.0, 1.0))
def test_blur_keeps_constant_images_and_their_mean(sigma, level):
    flat = torch.full((2, 1, 8, 8), level)
    torch.testing.assert_close(gaussian_blur(flat, sigma), flat)
    x = images()
    blurred = gaussian_blur(x, sigma)
    assert float(blurred.std()) < float(x.std())  # blur removes variance
    np.testing.assert_allclose(blurred.mean().item(), x.mean().item(), atol=0.02)


def test_blur_attenuates_high_frequencies_more():
    xx = torch.arange(16.0).expand(16, 16)
    slow = (0.5 + 0.4 * torch.cos(2 * torch.pi * xx / 16)).reshape(1, 1, 16, 16)
    fast = (0.5 + 0.4 * (-1.0) ** xx).reshape(1, 1, 16, 16)
    amplitude = lambda x: float((gaussian_blur(x, 1.0) - 0.5)[..., 4:-4].abs().max())  # noqa: E731 (interior)
    assert amplitude(fast) < 0.05 < amplitude(slow)


def test_jpeg_round_trip_is_close_at_high_quality_and_exact_for_constants():
    x = images()
    assert float((jpeg_compress(x, 95) - x).abs().mean()) < 0.05
    assert float((jpeg_compress(x, 95) - x).abs().mean()) < float((jpeg_compress(x, 10) - x).abs().mean())
    flat = torch.full((1, 1, 16, 16), 128 / 255)
    torch.testing.assert_close(jpeg_compress(flat, 50), flat)


@pytest.mark.parametrize("sigma", [0.0, -1.0])
def test_blur_rejects_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma="):
        gaussian_blur(images(), sigma)


@pytest.mark.parametrize("quality", [0, 96, 50.0])
def test_jpeg_rejects_bad_quality(quality):
    with pytest.raises(ValueError, match="quality="):
        jpeg_compress(images(), quality)


def test_filters_reject_bad_images():
    with pytest.raises(ValueError, match="x="):
        low_pass_filter(images() + 1, 0.5)
    with pytest.raises(ValueError, match="x="):
        gaussian_blur(torch.ones(16, 16), 1.0)
    with pytest.raises(ValueError, match="x="):
        jpeg_compress(torch.ones(1, 1, 16, 16, dtype=torch.int64), 50)
    with pytest.raises(ValueError, match="cutoff="):
        low_pass_filter(images(), 3.0)
