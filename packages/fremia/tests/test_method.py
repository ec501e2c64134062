"""The high-frequency filter and the unified score: brute-force DFT, symmetry, limits, Parseval, bad inputs."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_fremia import distance, frequency_mask, high_frequency_energy, high_frequency_filter, membership_score
from icml26_fremia.method import max_radius

sizes = st.sampled_from([4, 5, 8, 9, 16])


def _brute_force_filter(x: np.ndarray, tau: int, s: float) -> np.ndarray:
    """The filter written as an explicit DFT sum over signed frequencies (no fftshift)."""
    h, w = x.shape
    out = np.zeros((h, w), dtype=complex)
    for kh in range(h):
        for kw in range(w):
            fh, fw = (kh + h // 2) % h - h // 2, (kw + w // 2) % w - w // 2  # signed frequency, shift-centred
            coef = np.sum(x * np.exp(-2j * np.pi * (kh * np.arange(h)[:, None] / h + kw * np.arange(w)[None] / w)))
            gain = 1.0 if abs(fh) <= tau and abs(fw) <= tau else s
            out += gain * coef * np.exp(2j * np.pi * (kh * np.arange(h)[:, None] / h + kw * np.arange(w)[None] / w))
    return out / (h * w)


@settings(max_examples=15, deadline=None)
@given(sizes, sizes, st.integers(0, 3), st.floats(0, 1), st.integers(0, 100))
def test_filter_matches_brute_force_dft_and_is_real(h, w, tau, s, seed):
    tau = min(tau, max_radius(h, w))
    x = np.random.default_rng(seed).normal(size=(h, w))
    expected = _brute_force_filter(x, tau, s)
    assert np.abs(expected.imag).max() < 1e-9  # a symmetric mask keeps a real image real
    got = high_frequency_filter(torch.tensor(x), tau, s).numpy()
    np.testing.assert_allclose(got, expected.real, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(sizes, sizes, st.integers(0, 7), st.floats(0, 0.99))
def test_mask_is_hermitian_symmetric(h, w, tau, s):
    tau = min(tau, max_radius(h, w))
    m = np.fft.ifftshift(frequency_mask(h, w, tau, s).numpy())  # back to FFT order: index k is frequency k
    flipped = m[(-np.arange(h)) % h][:, (-np.arange(w)) % w]  # M(-k)
    np.testing.assert_array_equal(m, flipped)
    assert (m == 1.0).sum() == (2 * tau + 1) ** 2


def test_official_asymmetric_square_is_not_reproduced():
    # The official slice [c - tau, c + tau) keeps frequencies -tau..tau-1; ours keeps -tau..tau.
    m = frequency_mask(8, 8, tau=2, s=0.0).numpy()
    assert m[4, 4 - 2] == 1 and m[4, 4 + 2] == 1  # both +-2 kept
    assert m[4, 4 - 3] == 0 and m[4, 4 + 3] == 0


def test_official_mask_is_the_official_slice_and_halves_the_boundary_attenuation():
    """Issue 20: ``mask="official"`` reproduces the official ``[c - tau, c + tau)`` square; after ``.real`` a
    cosine at |k| = tau is scaled by (1 + s) / 2 (0.6 at s = 0.2), while the symmetric default keeps it."""
    x = torch.rand(3, 16, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    tau, s = 3, 0.2
    official = np.full((16, 16), s)
    official[8 - tau : 8 + tau, 8 - tau : 8 + tau] = 1.0  # the official slice, by hand
    spectrum = np.fft.fftshift(np.fft.fft2(x.numpy()), axes=(-2, -1))
    by_hand = np.fft.ifft2(np.fft.ifftshift(spectrum * official, axes=(-2, -1))).real
    np.testing.assert_allclose(high_frequency_filter(x, tau, s, mask="official").numpy(), by_hand, atol=1e-12)
    np.testing.assert_array_equal(frequency_mask(16, 16, tau, s, mask="official").numpy(), official)
    cosine = torch.cos(2 * np.pi * tau * torch.arange(16, dtype=torch.float64) / 16).expand(16, 16)
    torch.testing.assert_close(high_frequency_filter(cosine, tau, s, mask="official"), (1 + s) / 2 * cosine)
    torch.testing.assert_close(high_frequency_filter(cosine, tau, s), cosine)  # symmetric: |k| = tau is kept
    with pytest.raises(ValueError, match="mask='round'"):
        frequency_mask(16, 16, tau, s, mask="round")


def test_radius_beyond_image_raises_instead_of_wrapping():
    assert max_radius(8, 8) == 3 and max_radius(9, 9) == 4 and max_radius(16, 32) == 7
    frequency_mask(16, 16, tau=7)
    with pytest.raises(ValueError, match="tau=8"):
        frequency_mask(16, 16, tau=8)  # the official filter's negative start index would wrap here
    with pytest.raises(ValueError, match="tau=20"):
        high_frequency_filter(torch.zeros(2, 16, 16), tau=20)


def test_s_one_is_identity_and_s_zero_is_an_idempotent_projection():
    x = torch.randn(3, 2, 16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(high_frequency_filter(x, 3, 1.0), x)
    low = high_frequency_filter(x, 3, 0.0)
    torch.testing.assert_close(high_frequency_filter(low, 3, 0.0), low)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 7), st.floats(0, 1), st.integers(0, 100))
def test_parseval_high_frequency_energy_is_scaled_by_s_squared(tau, s, seed):
    x = torch.randn(4, 16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    low = high_frequency_filter(x, tau, 0.0)
    torch.testing.assert_close(high_frequency_energy(x, tau), ((x - low) ** 2).sum((-2, -1)))
    filtered = high_frequency_filter(x, tau, s)
    expected = (low**2).sum((-2, -1)) + s**2 * ((x - low) ** 2).sum((-2, -1))
    torch.testing.assert_close((filtered**2).sum((-2, -1)), expected)


def test_filter_is_linear_and_keeps_smooth_images():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(16, 16, dtype=torch.float64, generator=g), torch.randn(16, 16, dtype=torch.float64, generator=g)
    torch.testing.assert_close(
        high_frequency_filter(2 * a - b, 2), 2 * high_frequency_filter(a, 2) - high_frequency_filter(b, 2)
    )
    grid = torch.arange(16, dtype=torch.float64)
    smooth = torch.cos(2 * torch.pi * grid[:, None] / 16) + torch.sin(2 * torch.pi * 2 * grid[None] / 16)
    torch.testing.assert_close(high_frequency_filter(smooth, 2), smooth)  # frequencies 1 and 2 <= tau
    assert float(high_frequency_energy(smooth, 2)) < 1e-20


def test_score_is_the_distance_of_filtered_pairs():
    g = torch.Generator().manual_seed(2)
    target, prediction = torch.randn(5, 1, 8, 8, generator=g), torch.randn(5, 1, 8, 8, generator=g)
    plain = membership_score(target, prediction, lp=4, use_filter=False)
    torch.testing.assert_close(plain, ((target - prediction) ** 4).sum((1, 2, 3)))
    filtered = membership_score(target, prediction, lp=2, use_filter=True, tau=1, s=0.2)
    diff = high_frequency_filter(target - prediction, 1, 0.2)  # F is linear: F(a) - F(b) = F(a - b)
    torch.testing.assert_close(filtered, (diff**2).sum((1, 2, 3)))
    assert (filtered <= membership_score(target, prediction, lp=2, use_filter=False) + 1e-5).all()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: frequency_mask(8, 8, tau=-1), "tau=-1"),
        (lambda: frequency_mask(8, 8, tau=1.5), "tau=1.5"),
        (lambda: frequency_mask(8, 8, tau=1, s=1.5), "s=1.5"),
        (lambda: frequency_mask(8, 8, tau=1, s=-0.1), "s=-0.1"),
        (lambda: high_frequency_filter(torch.zeros(8)), "x="),
        (lambda: high_frequency_filter(torch.zeros(3, 1, 8)), "x="),
        (lambda: high_frequency_filter(torch.full((8, 8), float("nan"))), "x="),
        (lambda: high_frequency_filter(np.zeros((8, 8))), "x="),
        (lambda: distance(torch.zeros(2, 8, 8), torch.zeros(2, 8, 8), lp=0), "lp=0"),
        (lambda: distance(torch.zeros(2, 8, 8), torch.zeros(2, 4, 4)), "prediction="),
        (lambda: membership_score(torch.zeros(2, 8, 8), torch.zeros(2, 8, 8), use_filter=1), "use_filter=1"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name.replace("(", r"\(").replace(".", r"\.")):
        call()
