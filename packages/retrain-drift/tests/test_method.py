"""The grid simulator and the paper's quantities: limits, closed forms, exact identities, bounds."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_retrain_drift import (
    chi_square,
    discounted_sum,
    generate,
    girsanov_upper,
    mixture_density,
    plateau,
    retrain,
    score_error,
    score_error_energy,
    score_perturbation,
    time_grid,
)
from icml26_retrain_drift.grid import grid_gradient, ou_kernels

OTHER = ((0.35, 0.45, 0.2), (-2.45, 0.05, 2.5), (0.62, 0.8, 0.5))  # a nearby mixture


def test_forward_marginals_match_closed_form(setup):
    x, t, p = setup
    dx = x[1] - x[0]
    with jax.enable_x64(True):
        q_t = np.asarray(ou_kernels(jnp.asarray(x), jnp.asarray(t)) @ jnp.asarray(p))
    for k in (5, 20, 40):
        exact, score = mixture_density(x, t=t[k])
        assert np.abs(q_t[k] - exact).max() < 1e-3
        inner = slice(20, -20)
        assert np.allclose(
            np.asarray(grid_gradient(jnp.log(q_t[k]), dx))[inner], score[inner], atol=0.1
        )  # O(dx^2) in the valleys
    assert np.allclose(q_t[0], p)  # t = 0: the identity


def test_exact_score_reproduces_training_density(setup):
    x, t, p = setup
    gen = generate(p, np.zeros((len(t), len(x))), x, t)
    assert chi_square(gen.p_hat, p, x[1] - x[0]) < 1e-12
    assert gen.eps2 == 0.0


def test_gradient_score_error_samples_the_perturbed_density(setup):
    """eta = score of another mixture minus the true score: the reverse SDE must sample that mixture."""
    x, t, p = setup
    dx = x[1] - x[0]
    eta = np.stack([mixture_density(x, *OTHER, t=tk)[1] - mixture_density(x, t=tk)[1] for tk in t])
    target = mixture_density(x, *OTHER)[0]
    target /= target.sum() * dx
    gen = generate(p, eta, x, t)
    assert chi_square(gen.p_hat, target, dx) < 1e-3 * chi_square(target, p, dx)
    # a gradient error is fully observable: I = chi2 ~ 2 KL ~ 2 eps2, the Girsanov constant is attained
    assert 1.8 < chi_square(gen.p_hat, p, dx) / gen.eps2 < 2.2


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000), st.floats(0.005, 0.05))
def test_intra_generation_sandwich(setup, seed, eps):
    """Two-sided bound in the small-error regime: 0 < I / eps2 <= 2 (leading-order Girsanov constant)."""
    x, t, p = setup
    phi = score_perturbation(x, np.random.default_rng(seed), bumps=12, width=0.5)
    gen = generate(p, score_error(phi, eps, t), x, t)
    ratio = chi_square(gen.p_hat, p, x[1] - x[0]) / gen.eps2
    assert 0.1 < ratio <= 2.0 * (1 + 2 * eps)
    assert 0.8 < gen.eps2_hat / gen.eps2 < 1.2  # learned and ideal path energies agree at small error


def test_retraining_identities(setup):
    x, t, p = setup
    dx = x[1] - x[0]
    rng = np.random.default_rng(0)
    phis = 0.05 * np.stack([score_perturbation(x, rng) for _ in range(3)])
    batch = np.stack([phis, phis, phis, np.zeros_like(phis)])  # last pipeline: the exact score
    alphas = np.array([0.0, 0.3, 1.0, 0.5])
    run = retrain(p, batch, alphas, x, t)
    assert run.D.shape == (4, 4) and run.I.shape == (4, 3) and run.p_hat.shape == (4, len(x))
    assert np.allclose(run.D[2, 1:], run.I[2])  # alpha = 1: every generation starts from p_data
    assert np.allclose(run.D[:, 1], run.I[:, 0])  # generation 0 always trains on p_data
    # exact algebra of one step: chi2(q_i || p_data) = (1 - alpha)^2 D_i
    q1 = 0.3 * p + 0.7 * run.p_hat[1]
    assert np.isclose(chi_square(q1, p, dx), 0.49 * run.D[1, -1], rtol=1e-10)
    assert np.abs(run.D[3]).max() < 1e-12  # zero error: no drift


@settings(deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12), st.floats(0, 1))
def test_discounted_sum_matches_brute_force(errors, alpha):
    out = discounted_sum(errors, alpha)
    for N in range(1, len(errors) + 1):
        brute = sum((1 - alpha) ** (2 * m) * errors[N - 1 - m] for m in range(N))
        assert np.isclose(out[N - 1], brute)
    assert np.allclose(discounted_sum(errors, 0.0), np.cumsum(errors))


@given(st.floats(0.01, 1.0), st.floats(1e-4, 1.0))
def test_plateau_is_the_limit_of_the_discounted_sum(alpha, error):
    assert np.isclose(discounted_sum([error] * 4000, alpha)[-1], plateau(error, alpha))
    assert plateau(error, 0.0) == float("inf")


def test_chi_square_closed_form_and_support():
    x = np.linspace(-12, 12, 4001)
    dx = x[1] - x[0]
    gauss = lambda m: np.exp(-0.5 * (x - m) ** 2) / np.sqrt(2 * np.pi)  # noqa: E731
    assert np.isclose(chi_square(gauss(0.3), gauss(0.0), dx), np.expm1(0.09), rtol=1e-6)
    q = gauss(0.0).copy()
    q[:10] = 0.0
    assert chi_square(gauss(0.0), q, dx) == float("inf")
    assert chi_square(q, q, dx) == 0.0


def test_score_error_energy_closed_form(setup):
    x, t, p = setup
    q_t = np.broadcast_to(p, (len(t), len(x)))
    assert np.isclose(score_error_energy(q_t, np.full(q_t.shape, 0.1), t, x[1] - x[0]), 0.01 * t[-1])
    assert np.allclose(girsanov_upper([0.5, 1.0]), [1.0, 2.0])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda x, t, p: retrain(p, np.zeros((1, len(x))), 1.5, x, t), "alpha"),
        (lambda x, t, p: retrain(p, np.zeros((1, len(x))), -0.1, x, t), "alpha"),
        (lambda x, t, p: discounted_sum([1.0], 2.0), "alpha"),
        (lambda x, t, p: plateau(1.0, -1.0), "alpha"),
        (lambda x, t, p: plateau(0.0, 0.5), "error"),
        (lambda x, t, p: retrain(p, np.zeros(len(x)), 0.5, x, t), "phis"),
        (lambda x, t, p: retrain(p, np.zeros((1, 7)), 0.5, x, t), "phis"),
        (lambda x, t, p: generate(2 * p, np.zeros((len(t), len(x))), x, t), "q"),
        (lambda x, t, p: generate(-p, np.zeros((len(t), len(x))), x, t), "q"),
        (lambda x, t, p: generate(p, np.zeros((3, len(x))), x, t), "eta"),
        (lambda x, t, p: generate(p, np.zeros((len(t), len(x))), x**3, t), "x"),
        (lambda x, t, p: generate(p, np.zeros((len(t), len(x))), x, t[::-1]), "t"),
        (lambda x, t, p: time_grid(-1.0), "T"),
        (lambda x, t, p: time_grid(0.0), "T"),
        (lambda x, t, p: time_grid(8.0, 1), "steps"),
        (lambda x, t, p: time_grid(1.0, 10, 2.0), "t_min"),
        (lambda x, t, p: score_error(np.ones(len(x)), -0.1, t), "eps"),
        (lambda x, t, p: score_perturbation(x, np.random.default_rng(0), bumps=0), "bumps"),
        (lambda x, t, p: score_perturbation(x, np.random.default_rng(0), width=0.0), "width"),
        (lambda x, t, p: girsanov_upper([-1.0]), "eps2"),
        (lambda x, t, p: chi_square(p, p[:-1], 0.1), "q"),
        (lambda x, t, p: chi_square(p, p, 0.0), "dx"),
    ],
)
def test_bad_inputs(setup, call, name):
    with pytest.raises(ValueError, match=name):
        call(*setup)


def test_too_large_score_error_is_refused(setup):
    x, t, p = setup
    with pytest.raises(ValueError, match="eta"):
        generate(p, score_error(np.ones(len(x)), 50.0, t), x, t)


def test_ratio_equation_matches_a_direct_fokker_planck_solve(setup):
    """Independent path: the reverse Fokker-Planck equation for rho itself (finite volumes, scipy BDF)
    must give the same generated density as the ratio equation (R) of ``grid.py``."""
    from scipy.integrate import solve_ivp

    x, t, p = setup
    dx = x[1] - x[0]
    phi = score_perturbation(x, np.random.default_rng(3))
    eps, T = 0.3, t[-1]
    gen = generate(p, score_error(phi, eps, t), x, t)
    faces = np.concatenate([x - dx / 2, [x[-1] + dx / 2]])[1:-1]
    phi_faces = np.interp(faces, x, phi)

    def rhs(s, rho):  # d rho / ds = -d/dx [(x + 2 s_hat) rho - d rho / dx], reverse time s = T - t
        tt = max(T - s, 0.0)
        drift = faces + 2 * (mixture_density(faces, t=tt)[1] + eps * np.exp(-tt) * phi_faces)
        flux = drift * 0.5 * (rho[1:] + rho[:-1]) - np.diff(rho) / dx
        return -np.diff(np.concatenate([[0.0], flux, [0.0]])) / dx

    prior = np.exp(-0.5 * x**2)
    sol = solve_ivp(rhs, (0.0, T), prior / (prior.sum() * dx), method="BDF", rtol=1e-8, atol=1e-12)
    rho = sol.y[:, -1]
    assert chi_square(gen.p_hat, rho, dx) < 0.01 * chi_square(gen.p_hat, p, dx)  # both O(dx^2)


def test_no_generation_is_refused(setup):
    x, t, p = setup
    with pytest.raises(ValueError, match="phis"):
        retrain(p, np.zeros((0, len(x))), 0.5, x, t)
