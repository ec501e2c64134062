"""CEN's steps: spike blocks, spectrum, bounded spectral centroid, response selection, peak localisation."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_cen_autofocus import (
    BOUNDS,
    NoFocusSignal,
    SweepSpec,
    accumulate_spikes,
    bounded_spectral_centroid,
    cen_autofocus,
    consistent_response,
    near_max_centroid,
    power_spectrum,
    radial_frequency,
    response_structure,
    scene,
    select_response,
    simulate_sweep,
    to_lens_position,
)
from icml26_cen_autofocus.method import RHO_MAX
from scipy import ndimage

RNG = np.random.default_rng(0)


def brute_force_centroid(image: np.ndarray, bound: float) -> float:
    """Bounded centroid from an explicit double-sum DFT (no FFT, no window)."""
    h, w = image.shape
    x = image - image.mean()
    num = den = 0.0
    for u in range(h):
        for v in range(w):
            fu, fv = min(u, h - u) / h, min(v, w - v) / w
            rho = math.hypot(fu, fv)
            if 0 < rho <= bound:
                yy, xx = np.mgrid[0:h, 0:w]
                p = abs((x * np.exp(-2j * np.pi * (u * yy / h + v * xx / w))).sum()) ** 2
                num, den = num + rho * p, den + p
    return num / den


def test_accumulate_spikes_sums_each_block():
    spikes = RNG.random((12, 5, 4)) < 0.3
    blocks = accumulate_spikes(spikes, 4)
    assert blocks.shape == (3, 5, 4)
    for k in range(3):
        np.testing.assert_array_equal(blocks[k], spikes[4 * k : 4 * k + 4].sum(0))


def test_radial_frequency_grid():
    rho = radial_frequency((8, 6))
    assert rho[0, 0] == 0 and rho.max() <= RHO_MAX + 1e-12
    assert rho[4, 3] == pytest.approx(math.hypot(0.5, 0.5))


def test_power_spectrum_obeys_parseval_without_window():
    b = RNG.random((2, 8, 10))
    p = power_spectrum(b, window=False)
    centred = b - b.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(p.sum(axis=(1, 2)), 80 * (centred**2).sum(axis=(1, 2)))
    assert np.allclose(p[:, 0, 0], 0)  # mean removed: no DC term


@pytest.mark.parametrize("shape", [(8, 8), (7, 9), (6, 5)])
def test_centroid_matches_brute_force_dft(shape):
    image = RNG.random(shape)
    blocks = np.stack([image] * 3)
    for bound in (0.2, 0.4, RHO_MAX):
        ours = bounded_spectral_centroid(blocks, [bound], window=False)[0, 0]
        assert ours == pytest.approx(brute_force_centroid(image, bound), rel=1e-10)


def test_centroid_uses_the_windowed_full_spectrum():
    blocks = RNG.random((3, 10, 7))
    p, rho = power_spectrum(blocks), radial_frequency((10, 7))
    band = (rho > 0) & (rho <= 0.3)
    expected = (p * rho * band).sum(axis=(1, 2)) / (p * band).sum(axis=(1, 2))
    np.testing.assert_allclose(bounded_spectral_centroid(blocks, [0.3])[0], expected, rtol=1e-12)


def test_centroid_of_a_cosine_is_its_frequency():
    y = np.arange(32)[:, None] * np.ones((1, 32))
    image = 1 + np.cos(2 * np.pi * 0.125 * y)
    c = bounded_spectral_centroid(np.stack([image] * 3), [0.2, 0.5], window=False)
    np.testing.assert_allclose(c, 0.125)


@given(st.floats(0.01, 100.0), st.sampled_from(BOUNDS))
def test_centroid_cancels_a_global_brightness_factor(g, bound):
    blocks = RNG.random((3, 32, 32))
    c1 = bounded_spectral_centroid(blocks, [bound])
    c2 = bounded_spectral_centroid(g * blocks, [bound])
    np.testing.assert_allclose(c1, c2, rtol=1e-9)
    assert ((c1 > 0) & (c1 <= bound)).all()


def test_centroid_migrates_inward_under_defocus():
    image = scene("camera", 64, np.random.default_rng(1))
    blurred = np.stack([ndimage.gaussian_filter(image, s) for s in (0.5, 1, 2, 3, 4)])
    c = bounded_spectral_centroid(blurred, [0.125, 0.25])
    assert (np.diff(c, axis=1) < 0).all()


def test_response_structure_of_a_triangle_and_a_ramp():
    tri = 1 - np.abs(np.arange(11) - 4) / 10
    s = response_structure(tri)
    # left end 0.6, right end 0.4: descends 0.4 on the left of a 0.6 range; half-prominence level 0.8 -> k in 2..6
    assert s.peak == 4 and s.interior and s.prominence == pytest.approx(0.4 / 0.6) and s.width == 5
    assert s.score == pytest.approx(0.4 / 0.6 * (1 - 5 / 11))
    ramp = np.arange(11.0)
    assert response_structure(ramp).score == 0 and not response_structure(ramp).interior


@given(st.lists(st.floats(-10, 10), min_size=3, max_size=20))
def test_structure_score_is_in_unit_interval(values):
    s = response_structure(np.array(values))
    assert 0 <= s.score <= 1 and 0 <= s.prominence <= 1 + 1e-12


def test_select_response_prefers_the_clear_interior_peak():
    k = np.arange(21.0)
    noisy_spike = 0.01 * k
    noisy_spike[2] += 0.1  # one-position spike near the edge, on a rising ramp
    clear = np.exp(-((k - 12) ** 2) / 8)
    assert select_response(np.stack([noisy_spike, clear, k])) == 1


def test_consistent_response_drops_single_position_outliers_and_keeps_peaks():
    k = np.arange(21.0)
    wide = np.exp(-((k - 12) ** 2) / 8)
    spiked = wide.copy()
    spiked[3] = 5.0  # one noisy block
    out = consistent_response(np.stack([wide, spiked]))
    # the median flattens the top into a symmetric plateau; the near-max centroid recovers its centre
    assert near_max_centroid(out[0]) == pytest.approx(12.0) and near_max_centroid(out[1]) == pytest.approx(12.0)
    np.testing.assert_array_equal(consistent_response(np.stack([spiked]), smooth=1)[0], spiked)


@given(st.lists(st.floats(-10, 10), min_size=3, max_size=15))
def test_consistent_response_stays_within_the_curve_range(values):
    c = np.array([values])
    out = consistent_response(c)
    assert out.shape == c.shape and out.min() >= c.min() and out.max() <= c.max()


def test_near_max_centroid_is_exact_on_symmetric_peaks():
    c = 1 - np.abs(np.arange(15) - 6.0) / 14
    assert near_max_centroid(c, 0.5) == pytest.approx(6.0)


@given(st.floats(-5.0, 5.0), st.floats(0.1, 50.0), st.floats(-3, 3), st.floats(0.05, 0.95))
def test_near_max_centroid_is_affine_invariant_and_near_the_max(vertex_shift, a, b, delta):
    k = np.arange(21.0)
    c = -((k - 10 - vertex_shift) ** 2)
    est = near_max_centroid(c, delta)
    assert est == pytest.approx(near_max_centroid(a * c + b, delta), abs=1e-9)
    assert abs(est - np.argmax(c)) <= 10 * delta + 1


@pytest.mark.parametrize("K", [2, 8, 25])
def test_near_max_centroid_of_a_one_position_run_is_exactly_the_peak(K):
    # issue 16.10: np.r_[np.zeros(7), 1.0] gave 7.000000000000001 > K - 1
    for peak in range(K):
        curve = np.zeros(K)
        curve[peak] = 1.0
        assert near_max_centroid(curve, 0.3) == peak


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=30), st.floats(0.01, 0.99))
def test_near_max_centroid_stays_inside_the_sweep(values, delta):
    c = np.array(values)
    if np.ptp(c) > 0:
        assert 0 <= near_max_centroid(c, delta) <= c.size - 1


@pytest.mark.parametrize("curve", [np.zeros(9), np.full(9, 0.37)])
def test_near_max_centroid_of_a_flat_curve_is_no_focus_signal(curve):
    with pytest.raises(NoFocusSignal, match="^curve=.*flat"):
        near_max_centroid(curve, 0.3)


@pytest.mark.parametrize(
    "blocks",
    [np.zeros((9, 32, 32)), np.full((9, 32, 32), 4.0), np.tile(RNG.integers(0, 5, (1, 32, 32)), (9, 1, 1))],
    ids=["powerless", "uniform", "identical"],
)
def test_cen_on_a_sweep_without_focus_signal_raises(blocks):
    # issue 16.10: a flat or powerless input returned k* = 0 silently
    with pytest.raises(NoFocusSignal, match="^blocks=.*no focus signal"):
        cen_autofocus(blocks)
    assert issubclass(NoFocusSignal, ValueError)


def test_cen_finds_focus_on_a_simulated_sweep():
    rng = np.random.default_rng(3)
    spec = SweepSpec(n_positions=25, k_focus=11.3, drift="linear", drift_strength=0.5)
    result = cen_autofocus(simulate_sweep(scene("astronaut", 64, rng), spec, rng))
    assert abs(result.k_star - 11.3) <= 1.0 and result.bound in BOUNDS
    assert result.curves.shape == result.responses.shape == (len(BOUNDS), 25)
    assert result.scores.shape == (len(BOUNDS),)


def test_cen_maps_to_lens_positions():
    rng = np.random.default_rng(4)
    blocks = simulate_sweep(scene("bars", 48, rng), SweepSpec(n_positions=21, k_focus=10.0), rng)
    positions = np.linspace(2.0, 4.0, 21)
    r = cen_autofocus(blocks, positions=positions)
    assert r.position == pytest.approx(2.0 + 0.1 * r.k_star)
    assert to_lens_position(1.5, [0.0, 1.0, 3.0]) == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: accumulate_spikes(np.ones((4, 3)), 1), "spikes"),
        (lambda: accumulate_spikes(np.full((4, 3, 3), 2), 1), "spikes"),
        (lambda: accumulate_spikes(np.ones((4, 3, 3)), 0), "block"),
        (lambda: accumulate_spikes(np.ones((4, 3, 3)), 3), "block"),
        (lambda: accumulate_spikes(np.ones((4, 3, 3)), 5), "block"),
        (lambda: cen_autofocus(np.ones((2, 16, 16))), "blocks"),
        (lambda: cen_autofocus(np.ones((0, 16, 16))), "blocks"),
        (lambda: cen_autofocus(-np.ones((3, 16, 16))), "blocks"),
        (lambda: cen_autofocus(np.ones((3, 3, 16))), "blocks"),
        (lambda: cen_autofocus(np.full((3, 16, 16), np.nan)), "blocks"),
        (lambda: cen_autofocus(np.ones((3, 16, 16)), bounds=[0.8]), "bounds"),
        (lambda: cen_autofocus(np.ones((3, 16, 16)), bounds=[0.0]), "bounds"),
        (lambda: cen_autofocus(np.ones((3, 16, 16)), bounds=[0.01]), "bounds"),
        (lambda: cen_autofocus(np.ones((3, 16, 16)), delta=1.0), "delta"),
        (lambda: cen_autofocus(RNG.random((3, 32, 32)), positions=[0, 2, 1]), "positions"),
        (lambda: cen_autofocus(RNG.random((3, 32, 32)), positions=[0, 1]), "positions"),
        (lambda: near_max_centroid(np.arange(5.0), delta=0.0), "delta"),
        (lambda: consistent_response(np.ones((2, 5)), smooth=2), "smooth"),
        (lambda: consistent_response(np.ones((2, 5)), smooth=7), "smooth"),
        (lambda: response_structure(np.arange(2.0)), "curve"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        call()
