import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_diffusion_info import (
    VPSchedule,
    entropy_production_rate,
    fraction_before,
    information_profile,
    integrate,
    mutual_information_rate,
    time_centroid,
    time_grid,
)


def test_schedule_matches_the_sde():
    s = VPSchedule()
    t = np.linspace(0.01, 1, 50)
    # mu' = -1/2 beta mu (the drift), std^2 = kappa^2 (1 - mu^2)
    h = 1e-6
    dmu = (s.mu(t + h) - s.mu(t - h)) / (2 * h)
    assert np.allclose(dmu, -0.5 * s.beta(t) * s.mu(t), rtol=1e-5)
    assert np.allclose(s.std(t) ** 2, 1 - s.mu(t) ** 2)
    assert s.mu(0.0) == 1 and s.std(0.0) == 0
    assert np.isclose(s.sigma(0.5), np.sqrt(0.1 + 15.9 * 0.5))


@given(st.integers(3, 200), st.floats(1e-6, 0.5), st.sampled_from(["log", "linear"]))
def test_time_grid_is_increasing_and_ends_at_one(n, eps, spacing):
    t = time_grid(eps, n, spacing)
    assert t.shape == (n,) and np.isclose(t[0], eps) and np.isclose(t[-1], 1.0)
    assert np.all(np.diff(t) > 0)


@given(st.floats(0.01, 10), st.floats(0.05, 0.95))
def test_fraction_before_of_a_constant_rate_is_the_time_share(c, t_split):
    t = np.linspace(0.01, 1, 101)
    assert np.isclose(fraction_before(t, np.full_like(t, c), t_split), (t_split - 0.01) / 0.99)


def test_centroid_of_a_constant_rate_is_the_midpoint():
    t = np.linspace(0.0 + 1e-3, 1, 1001)
    assert np.isclose(time_centroid(t, np.ones_like(t)), (1 + 1e-3) / 2)


def test_rates_are_half_sigma_squared_mean_norm():
    s = VPSchedule()
    e = np.array([[3.0, 4.0], [0.0, 0.0]])  # norms^2 25, 0
    assert np.isclose(entropy_production_rate(s, 0.3, e), 0.5 * s.sigma(0.3) ** 2 * 12.5)
    assert np.isclose(mutual_information_rate(s, 0.3, e), entropy_production_rate(s, 0.3, e))


def test_single_gaussian_entropy_rate_matches_closed_form():
    # data N(0, v I_D): p_t = N(0, a I), a = mu^2 v + std^2; e = (-1/a + 1) x, r = 1/2 sigma^2 D (1 - a)^2 / a
    s, v, d = VPSchedule(), 0.01, 4
    t = time_grid(1e-3, 40)
    rng = np.random.default_rng(0)
    x0 = np.sqrt(v) * rng.standard_normal((20000, d))

    def scores(x, tt, c):
        a = s.mu(tt) ** 2 * v + s.std(tt) ** 2
        return -x / a, -x / a

    profile = information_profile(s, t, x0, np.zeros(len(x0), int), scores, rng)
    a = s.mu(t) ** 2 * v + s.std(t) ** 2
    exact = 0.5 * s.sigma(t) ** 2 * d * (1 - a) ** 2 / a
    assert np.allclose(profile.entropy_rate, exact, rtol=0.05)
    assert np.allclose(profile.mi_rate, 0) and np.allclose(profile.mi_rate_denoising, 0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"beta_min": -0.1}, "beta_min"),
        ({"beta_min": 5.0, "beta_max": 5.0}, "beta_max"),
        ({"kappa": 0.0}, "kappa"),
        ({"kappa": float("nan")}, "kappa"),
    ],
)
def test_schedule_rejects_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        VPSchedule(**kwargs)


@pytest.mark.parametrize("eps", [0.0, -1e-3, 1.0])
def test_time_grid_rejects_eps_outside_0_1(eps):
    with pytest.raises(ValueError, match="eps="):
        time_grid(eps, 10)


def test_time_grid_rejects_bad_n_and_spacing():
    with pytest.raises(ValueError, match="n="):
        time_grid(1e-3, 2)
    with pytest.raises(ValueError, match="spacing="):
        time_grid(1e-3, 10, "cosine")


@pytest.mark.parametrize("times", [[0.5, 0.4, 1.0], [0.0, 0.5, 1.0], [0.1, 0.5, 1.5], [0.2]])
def test_integrals_reject_bad_time_grids(times):
    with pytest.raises(ValueError, match="times="):
        integrate(times, np.ones(len(times)))


def test_integrate_rejects_mismatched_rates_and_bad_split():
    t = np.linspace(0.1, 1, 5)
    with pytest.raises(ValueError, match="rates="):
        integrate(t, np.ones(4))
    with pytest.raises(ValueError, match="t_split="):
        fraction_before(t, np.ones(5), 1.0)


def test_profile_rejects_mismatched_labels_and_nonfinite_scores():
    s, t = VPSchedule(), time_grid(1e-3, 5)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="labels="):
        information_profile(s, t, np.zeros((4, 2)), np.zeros(3, int), lambda x, tt, c: (x, x), rng)
    with pytest.raises(FloatingPointError, match="non-finite"):
        information_profile(s, t, np.zeros((4, 2)), np.zeros(4, int), lambda x, tt, c: (x * np.nan, x), rng)
    with pytest.raises(ValueError, match="e="):
        entropy_production_rate(s, 0.5, np.array([[np.inf]]))
