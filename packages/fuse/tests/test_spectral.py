"""Spectral machinery: the low-pass split, RSM's band masks and the energy diagnostic."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_fuse.spectral import (
    R_MAX,
    band_stop_masks,
    cross_band_split,
    low_band_energy_fraction,
    low_pass,
    radial_energy_profile,
    radial_frequency,
    random_spectral_masking,
    sample_bands,
)

sizes = st.integers(2, 12)


def batch(seed, h=8, w=8):
    return torch.randn(3, 2, h, w, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_radial_frequency_matches_fftfreq_by_hand():
    r = radial_frequency(4, 6)
    assert r[0, 0] == 0 and math.isclose(float(r[2, 0]), 1.0) and math.isclose(float(r[2, 3]), R_MAX)
    fy, fx = np.fft.fftfreq(4) * 2, np.fft.fftfreq(6) * 2
    np.testing.assert_allclose(r.numpy(), np.hypot(fy[:, None], fx[None, :]))


@given(sizes, sizes, st.floats(0.0, R_MAX), st.integers(0, 99))
def test_low_pass_equals_numpy_brute_force(h, w, cutoff, seed):
    x = batch(seed, h, w)
    keep = np.hypot(np.fft.fftfreq(h)[:, None] * 2, np.fft.fftfreq(w)[None, :] * 2) <= cutoff
    expected = np.fft.ifft2(np.fft.fft2(x.numpy()) * keep).real
    np.testing.assert_allclose(low_pass(x, cutoff).numpy(), expected, atol=1e-10)


@given(sizes, sizes, st.floats(0.0, R_MAX), st.integers(0, 99))
def test_low_pass_is_an_orthogonal_projection(h, w, cutoff, seed):
    x = batch(seed, h, w)
    low, high = cross_band_split(x, cutoff)
    torch.testing.assert_close(low + high, x)
    torch.testing.assert_close(low_pass(low, cutoff), low)  # idempotent
    assert abs(float((low * high).sum())) < 1e-8  # the bands are orthogonal (Parseval)
    share = low_band_energy_fraction(x, cutoff)
    assert 0.0 <= share <= 1.0
    assert math.isclose(share, float((low**2).sum() / (x**2).sum()), rel_tol=1e-9, abs_tol=1e-12)


def test_low_pass_limits():
    x = batch(0)
    torch.testing.assert_close(low_pass(x, R_MAX), x)  # the whole spectrum: identity
    torch.testing.assert_close(low_pass(x, 0.0), x.mean(dim=(-2, -1), keepdim=True).expand_as(x))  # DC only


@given(st.integers(0, 99), st.floats(0.0, 0.4))
def test_rsm_removes_exactly_the_band(seed, width):
    delta = batch(seed)[:1]
    masked = random_spectral_masking(delta, (width, width), torch.Generator().manual_seed(seed))
    rng = torch.Generator().manual_seed(seed)
    r0, w = sample_bands(1, (width, width), rng)
    r = radial_frequency(8, 8)
    inside = (r >= r0[0]) & (r <= r0[0] + w[0])
    spectrum, original = torch.fft.fft2(masked), torch.fft.fft2(delta)
    assert torch.allclose(spectrum[..., inside], torch.zeros(()).to(spectrum.dtype), atol=1e-9)
    assert torch.allclose(spectrum[..., ~inside], original[..., ~inside], atol=1e-9)


@given(st.integers(1, 50), st.floats(0.0, R_MAX), st.integers(0, 99))
def test_sampled_bands_start_within_one_width_of_the_spectrum(n, w_max, seed):
    start, width = sample_bands(n, (0.0, w_max), torch.Generator().manual_seed(seed))
    assert (width >= 0).all() and (width <= w_max).all()
    assert (start >= -width).all() and (start <= R_MAX).all()  # the band [r0, r0 + w] meets [0, R_MAX]


def test_rsm_removes_the_corner_and_every_radius_equally_often():
    """Issue 16.2: the corner bin r = sqrt 2 of an even-sized image (a checkerboard) must be removable.

    With ``r0 ~ U[-w, R_MAX]`` every radius is removed with probability ``w / (R_MAX + w)``: checked on
    4000 bands for the DC bin, a middle bin and the corner bin (binomial sem 0.0075; margin 0.04 > 5 sem).
    """
    yy, xx = torch.meshgrid(torch.arange(16), torch.arange(16), indexing="ij")
    checkerboard = ((-1.0) ** (yy + xx)).to(torch.float64).reshape(1, 1, 16, 16).expand(4000, 1, 16, 16)
    masked = random_spectral_masking(checkerboard, (0.5, 0.5), torch.Generator().manual_seed(0))
    removed = masked.abs().amax(dim=(1, 2, 3)) < 1e-9  # the whole checkerboard is the corner bin
    assert 0 < int(removed.sum()) < 4000
    expected = 0.5 / (R_MAX + 0.5)
    start, width = sample_bands(4000, (0.5, 0.5), torch.Generator().manual_seed(0))
    masks = band_stop_masks(start, width, 16, 16)[:, 0]
    for row, col in ((0, 0), (0, 5), (8, 8)):  # r = 0, 0.625, sqrt 2
        assert abs(float((masks[:, row, col] == 0).double().mean()) - expected) < 0.04
    assert torch.equal(removed, masks[:, 8, 8] == 0)  # the same bands: RSM applies these masks


def test_full_width_band_from_zero_removes_everything():
    r = radial_frequency(16, 16)
    masks = band_stop_masks(torch.zeros(1, dtype=torch.float64), torch.full((1,), R_MAX, dtype=torch.float64), 16, 16)
    assert bool((masks == 0).all()) and float(r.max()) == pytest.approx(R_MAX)


def test_band_mask_of_zero_width_keeps_everything():
    masks = band_stop_masks(torch.tensor([0.3]), torch.tensor([0.0]), 8, 8)
    assert masks.shape == (1, 1, 8, 8) and bool((masks == 1).all())


def test_energy_diagnostic_separates_smooth_from_checkerboard():
    yy, xx = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
    checkerboard = ((-1.0) ** (yy + xx)).reshape(1, 1, 8, 8)  # all energy at the corner r = sqrt 2
    smooth = torch.cos(2 * math.pi * xx / 8).reshape(1, 1, 8, 8)  # r = 0.25
    assert low_band_energy_fraction(checkerboard, 0.5) < 1e-12
    assert math.isclose(low_band_energy_fraction(smooth, 0.5), 1.0)
    profile = radial_energy_profile(checkerboard, n_bins=4)
    assert math.isclose(float(profile[-1]), 1.0) and math.isclose(float(profile.sum()), 1.0)


@pytest.mark.parametrize("cutoff", [-0.1, R_MAX + 0.01, float("nan")])
def test_low_pass_rejects_radii_outside_the_spectrum(cutoff):
    with pytest.raises(ValueError, match="cutoff="):
        low_pass(batch(0), cutoff)


def test_low_pass_rejects_a_non_image_tensor():
    with pytest.raises(ValueError, match="x="):
        low_pass(torch.zeros(8, 8), 0.5)


@pytest.mark.parametrize("band_width", [(0.5, 0.2), (-0.1, 0.2), (0.1, 2.0)])
def test_rsm_rejects_bad_band_widths(band_width):
    with pytest.raises(ValueError, match="band_width"):
        random_spectral_masking(batch(0), band_width, torch.Generator())


def test_energy_diagnostic_rejects_zero_and_bad_shapes():
    with pytest.raises(ValueError, match="delta="):
        low_band_energy_fraction(torch.zeros(1, 1, 4, 4), 0.5)
    with pytest.raises(ValueError, match="delta="):
        low_band_energy_fraction(torch.ones(4, 4), 0.5)
    with pytest.raises(ValueError, match="cutoff="):
        low_band_energy_fraction(torch.ones(1, 1, 4, 4), 1.5)
