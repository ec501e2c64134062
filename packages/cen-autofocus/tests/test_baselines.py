"""The classic focus measures and the TFP reconstruction they see."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_cen_autofocus import FOCUS_MEASURES, SweepSpec, argmax_peak, focus_curve, render_sweep, scene
from icml26_cen_autofocus.baselines import (
    brenner,
    laplacian_variance,
    normalised_variance,
    spike_dispersion,
    tenengrad,
    tfp_reconstruction,
)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("measure", [tenengrad, laplacian_variance, brenner])
def test_gradient_measures_vanish_on_flat_frames(measure):
    assert measure(np.full((10, 10), 0.3)) == pytest.approx(0.0, abs=1e-20)


def test_brenner_matches_a_loop():
    f = RNG.random((5, 7))
    loop = np.mean([(f[i, j + 2] - f[i, j]) ** 2 for i in range(5) for j in range(5)])
    assert brenner(f) == pytest.approx(loop)


def test_tenengrad_of_a_horizontal_ramp():
    f = np.tile(np.arange(8.0), (8, 1))
    # Sobel of slope 1 inside: (1 + 2 + 1) * 2 = 8, squared 64; the two reflected border columns see slope
    # 1 on one side only: 4, squared 16. Mean over the 8 columns: (6 * 64 + 2 * 16) / 8 = 52.
    assert tenengrad(f) == pytest.approx(52.0)


@given(st.floats(0.01, 100.0))
def test_brightness_scaling(g):
    f = RNG.random((12, 12)) + 0.1
    assert tenengrad(g * f) == pytest.approx(g**2 * tenengrad(f), rel=1e-9)
    assert normalised_variance(g * f) == pytest.approx(g * normalised_variance(f), rel=1e-9)
    assert spike_dispersion(g * f) == pytest.approx(spike_dispersion(f), rel=1e-9)


def test_tfp_is_the_firing_rate():
    np.testing.assert_allclose(tfp_reconstruction(np.array([[[8, 4]]]), 16), [[[0.5, 0.25]]])


@pytest.mark.parametrize("measure", sorted(FOCUS_MEASURES))
def test_every_measure_peaks_at_focus_on_a_noiseless_sweep(measure):
    sweep = render_sweep(scene("camera", 48, np.random.default_rng(0)), SweepSpec(n_positions=21, k_focus=9.0), RNG)
    assert argmax_peak(focus_curve(sweep, measure)) == 9


def test_bad_inputs():
    with pytest.raises(ValueError, match="^measure="):
        focus_curve(RNG.random((3, 8, 8)), "sharpness")
    with pytest.raises(ValueError, match="^blocks="):
        focus_curve(RNG.random((2, 8, 8)), "tenengrad")
    with pytest.raises(ValueError, match="^n_frames="):
        tfp_reconstruction(RNG.random((3, 8, 8)), 0)
    with pytest.raises(ValueError, match="^curve="):
        argmax_peak(np.array([]))
