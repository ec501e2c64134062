"""The spike-camera focus-sweep simulator: integrate-and-fire, its closed form, PSF, drift, motion, bad inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_cen_autofocus import (
    SweepSpec,
    block_counts,
    defocus_sigma,
    illumination_drift,
    integrate_and_fire,
    render_sweep,
    scene,
    simulate_sweep,
)


def test_integrate_and_fire_block_equals_the_closed_form_on_the_same_photons():
    intensity = np.random.default_rng(0).random((2, 6, 7))
    spikes = integrate_and_fire(intensity, 50, photons=16, theta=64, dark=0.2, rng=np.random.default_rng(5))
    assert spikes.dtype == bool and spikes.shape == (50, 2, 6, 7)
    replay = np.random.default_rng(5)  # the same draws, in the simulator's order
    a0 = replay.uniform(0, 64, size=intensity.shape)
    total = sum(replay.poisson(16 * intensity + 0.2) for _ in range(50))
    np.testing.assert_array_equal(spikes.sum(0), np.floor((a0 + total) / 64))


def test_closed_form_matches_the_stream_in_distribution():
    intensity = np.full((200, 50), 0.6)
    stream = integrate_and_fire(intensity, 40, 16, 64, 0.2, np.random.default_rng(1)).sum(0)
    closed = block_counts(intensity, 40, 16, 64, 0.2, np.random.default_rng(2))
    assert stream.mean() == pytest.approx(closed.mean(), abs=0.05)
    assert stream.std() == pytest.approx(closed.std(), rel=0.1)
    assert closed.mean() == pytest.approx(40 * (16 * 0.6 + 0.2) / 64, abs=0.1)  # rate = photons / theta


@given(st.floats(0, 40), st.floats(0, 2), st.floats(0.05, 1))
def test_defocus_sigma_is_a_v_around_focus(k_focus, sigma0, slope):
    s = defocus_sigma(41, k_focus, sigma0, slope)
    assert s.min() >= sigma0 - 1e-12 and abs(int(np.argmin(s)) - k_focus) <= 0.5 + 1e-9


@pytest.mark.parametrize("pattern", ["none", "linear", "sinusoid", "step"])
def test_illumination_drift_stays_positive_and_within_strength(pattern):
    g = illumination_drift(41, pattern, 0.6, np.random.default_rng(0))
    assert g.shape == (41,) and (g > 0).all() and g.max() <= 1.3 + 1e-12 and g.min() >= 0.4 - 1e-12
    if pattern == "linear":
        assert {round(g[0], 9), round(g[-1], 9)} == {1.0, 0.4}


def test_render_sweep_is_sharpest_at_focus_and_scales_with_drift():
    image = scene("brick", 48, np.random.default_rng(0))
    spec = SweepSpec(n_positions=21, k_focus=7.0)
    sweep = render_sweep(image, spec, np.random.default_rng(1))
    sharp = [np.var(np.diff(f, axis=1)) for f in sweep]
    assert int(np.argmax(sharp)) == 7
    drifted = render_sweep(
        image, SweepSpec(n_positions=21, k_focus=7.0, drift="linear", drift_strength=0.5), np.random.default_rng(1)
    )
    ratio = drifted.mean(axis=(1, 2)) / sweep.mean(axis=(1, 2))
    np.testing.assert_allclose(sorted([ratio[0], ratio[-1]]), [0.5, 1.0])


def test_two_peak_sweep_has_two_sharp_regions():
    rng = np.random.default_rng(0)
    a, b = scene("gravel", 48, rng), scene("grass", 48, rng)
    spec = SweepSpec(n_positions=21, k_focus=5.0, second_focus=15.0, second_fraction=0.5)
    sweep = render_sweep(a, spec, rng, second=b)
    left = [np.var(np.diff(f[:, :24], axis=1)) for f in sweep]
    right = [np.var(np.diff(f[:, 24:], axis=1)) for f in sweep]
    assert int(np.argmax(left)) == 15 and int(np.argmax(right)) == 5


def test_motion_moves_the_scene():
    image = scene("camera", 48, np.random.default_rng(0))
    spec = SweepSpec(n_positions=5, k_focus=2.0, sigma0=0.0, slope=1e-6, motion=2.0)
    sweep = render_sweep(image, spec, np.random.default_rng(0))
    assert np.abs(sweep[-1] - sweep[0]).mean() > 0.01


def test_simulate_sweep_counts_are_integers_with_the_right_shape():
    rng = np.random.default_rng(0)
    spec = SweepSpec(n_positions=5, k_focus=2.0, n_frames=8)
    for stream in (False, True):
        blocks = simulate_sweep(scene("coins", 32, rng), spec, rng, stream=stream)
        assert blocks.shape == (5, 32, 32) and blocks.dtype == np.int64 and blocks.min() >= 0
        assert blocks.max() <= 8  # at most one spike per frame


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_positions": 2}, "n_positions"),
        ({"k_focus": 41.0}, "k_focus"),
        ({"slope": 0.0}, "slope"),
        ({"drift": "flicker"}, "drift"),
        ({"drift_strength": 1.0}, "drift_strength"),
        ({"motion": -1.0}, "motion"),
        ({"second_focus": -1.0}, "second_focus"),
        ({"second_fraction": 0.9}, "second_fraction"),
        ({"n_frames": 0}, "n_frames"),
        ({"theta": 20.0}, "theta"),
        ({"dark": -0.1}, "dark"),
    ],
)
def test_sweep_spec_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        SweepSpec(**kwargs)


def test_simulator_rejects_bad_scenes_and_intensities():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="^scene="):
        render_sweep(np.full((16, 16), 1.5), SweepSpec(), rng)
    with pytest.raises(ValueError, match="^scene="):
        render_sweep(np.full((16, 16), np.nan), SweepSpec(), rng)
    with pytest.raises(ValueError, match="^second="):
        render_sweep(np.ones((16, 16)) / 2, SweepSpec(second_focus=3.0), rng, second=np.ones((8, 8)) / 2)
    with pytest.raises(ValueError, match="^intensity="):
        integrate_and_fire(-np.ones((4, 4)), 4, 16, 64, 0.2, rng)
    with pytest.raises(ValueError, match="^pattern="):
        illumination_drift(5, "ramp", 0.5, rng)
