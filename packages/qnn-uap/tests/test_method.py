"""The closed form (A.1): amplitudes of the multiplexor cascade, the Thm 1 construction, shapes and bad inputs."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_qnn_uap import (
    SAQNN,
    amplitudes,
    basis_values,
    chebyshev_degrees,
    fourier_frequencies,
    num_index_qubits,
    num_parameters,
    theta_for_amplitudes,
)

F2 = np.array([[0, 0], [1, 1], [-1, -1]])


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_amplitudes_are_a_unit_vector_and_invert(m, seed):
    theta = np.random.default_rng(seed).uniform(0, np.pi, 2**m - 1)  # angles in [0, pi]: amplitudes >= 0
    with jax.enable_x64(True):
        a = np.asarray(amplitudes(theta, m))
        assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(np.asarray(amplitudes(theta_for_amplitudes(a), m)), a, atol=1e-12)


def test_amplitudes_match_the_kronecker_product_for_one_level():
    """With no controls in play (m = 1) P(theta)|0> = R_y(theta)|0> = (cos, sin)(theta / 2)."""
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(amplitudes(np.array([0.7]), 1)), [np.cos(0.35), np.sin(0.35)])


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["fourier", "chebyshev"]))
def test_construction_of_thm1_reproduces_any_series(seed, basis):
    """Proof of Thm 1: |a_r|^2 = |c_r|/a', phi_r = arg c_r gives a'|<0|U|0>| = |sum_r c_r B_r(x)|."""
    rng = np.random.default_rng(seed)
    freqs = fourier_frequencies(1, 2) if basis == "fourier" else chebyshev_degrees(2, 2)
    c = rng.normal(size=len(freqs)) + (1j * rng.normal(size=len(freqs)) if basis == "fourier" else 0)
    model = SAQNN(freqs, basis, rescale=float(np.abs(c).sum() * rng.uniform(1, 3)))
    x = rng.uniform(-1, 1, size=(7, 2))
    with jax.enable_x64(True):
        series = np.abs(np.asarray(basis_values(x, freqs, basis)) @ c)
        np.testing.assert_allclose(np.asarray(model(model.construct(c), x)), series, atol=1e-5)


def test_basis_values_are_exponentials_and_chebyshev_polynomials():
    x = np.array([[0.3, -0.5]])
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(basis_values(x, [[2, -1]], "fourier"))[0, 0], np.exp(1j * (0.6 + 0.5)))
        t2 = 2 * 0.3**2 - 1  # T_2(x) = 2x^2 - 1, T_3(x) = 4x^3 - 3x
        t3 = 4 * (-0.5) ** 3 - 3 * (-0.5)
        np.testing.assert_allclose(np.asarray(basis_values(x, [[2, 3]], "chebyshev"))[0, 0], t2 * t3, atol=1e-12)


def test_sizes_follow_the_paper():
    assert len(fourier_frequencies(3, 2)) == 49 and len(chebyshev_degrees(2, 2, "total")) == 6
    assert num_index_qubits(49) == 6 and num_parameters(49) == 63 + 49
    model = SAQNN(F2)
    assert (model.n, model.d, model.m, model.num_qubits, model.num_parameters) == (3, 2, 2, 4, 6)


def test_output_is_bounded_by_the_rescale():
    model = SAQNN(fourier_frequencies(1, 2), rescale=2.0)
    rng = np.random.default_rng(0)
    params = {"theta": rng.uniform(0, 6, 15), "phi": rng.uniform(0, 6, 9)}
    out = np.asarray(model(params, rng.uniform(-3, 3, (20, 2))))
    assert out.shape == (20,) and (out >= 0).all() and (out <= 2.0 + 1e-5).all()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: SAQNN(F2, rescale=0.0), "rescale"),
        (lambda: SAQNN(F2, basis="legendre"), "basis"),
        (lambda: SAQNN(np.array([[0, 0], [0, 0]])), "freqs"),
        (lambda: SAQNN(np.array([[0.5, 1.0]])), "freqs"),
        (lambda: SAQNN(np.array([[1, -1]]), basis="chebyshev"), "freqs"),
        (lambda: SAQNN(F2).basis_values(np.ones((3, 3))), "x"),
        (lambda: SAQNN(F2).basis_values(np.array([[np.nan, 0.0]])), "x"),
        (lambda: SAQNN(np.array([[1, 0]]), basis="chebyshev").basis_values(np.array([[1.5, 0.0]])), "x"),
        (lambda: SAQNN(F2).construct(np.ones(3)), "c"),
        (lambda: theta_for_amplitudes(np.ones(3)), "a"),
        (lambda: fourier_frequencies(-1, 2), "k"),
        (lambda: fourier_frequencies(1, 0), "d"),
        (lambda: chebyshev_degrees(2, 2, norm="l1"), "norm"),
        (lambda: num_index_qubits(0), "n"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("x64", [False, True])
def test_every_public_computation_runs_in_float64_whatever_the_x64_flag(x64):
    # issue 16.8: __call__ and overlap ran in complex64 unless the caller had enabled jax_enable_x64
    model = SAQNN(fourier_frequencies(2, 1), rescale=2.0)
    c = np.array([0.1 - 0.2j, 0.3j, -0.25, 0.2 + 0.1j, 0.05])
    params = model.construct(c)
    x = np.linspace(-3.0, 3.0, 11)[:, None]
    reference = np.exp(1j * x @ model.freqs.T) @ (c / model.rescale)  # eq. (A.1) with the constructed a, phi
    with jax.enable_x64(x64):
        z, f = model.overlap(params, x), model(params, x)
        values, a = model.basis_values(x), amplitudes(params["theta"], model.m)
        series, _slack = model.coefficients(params)
    assert (z.dtype, f.dtype, values.dtype, a.dtype, series.dtype) == (
        np.complex128,
        np.float64,
        np.complex128,
        np.float64,
        np.complex128,
    )
    np.testing.assert_allclose(np.asarray(z), reference, rtol=0, atol=1e-13)  # complex64 is 1e-7 off
    np.testing.assert_allclose(np.asarray(f), model.rescale * np.sqrt(np.abs(reference) ** 2 + 1e-12), atol=1e-13)
