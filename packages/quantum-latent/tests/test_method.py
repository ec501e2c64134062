"""The boson sampler: permanents, unitarity, exact probabilities, samplers and bad inputs."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_quantum_latent import (
    apply_loss,
    boson_probabilities,
    check_unitary,
    fock_states,
    haar_unitary,
    loop_unitary,
    permanent,
    sample_boson_clifford,
    sample_from_table,
)


def brute_permanent(A):
    """Sum over all n! permutations: the definition."""
    n = A.shape[0]
    return sum(np.prod([A[i, p[i]] for i in range(n)]) for p in itertools.permutations(range(n)))


def brute_amplitudes(U, s):
    """<t|U|s> by expanding prod_k (sum_j U[j, i_k] a_j^dagger) over all m^n photon routings."""
    m = U.shape[0]
    inputs = np.repeat(np.arange(m), s)
    coeff = {}
    for route in itertools.product(range(m), repeat=len(inputs)):
        t = tuple(np.bincount(route, minlength=m))
        coeff[t] = coeff.get(t, 0) + np.prod([U[j, i] for j, i in zip(route, inputs, strict=True)])
    norm = lambda c: math.prod(math.factorial(x) for x in c)  # noqa: E731
    return {t: c * math.sqrt(norm(t)) / math.sqrt(norm(s)) for t, c in coeff.items()}


@settings(deadline=None)
@given(st.integers(1, 6), st.integers(0, 10_000))
def test_permanent_matches_definition_on_complex_matrices(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n))
    assert np.isclose(permanent(A), brute_permanent(A))


@pytest.mark.slow  # importing thewalrus (numba, sympy, scipy.stats) costs ~5 s of CPU, a quarter of the test budget
def test_permanent_matches_thewalrus():
    thewalrus = pytest.importorskip("thewalrus")
    rng = np.random.default_rng(0)
    for n in range(1, 9):
        A = rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n))
        assert np.isclose(permanent(A), thewalrus.perm(A))


def test_permanent_matches_definition_and_batches():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(3, 4, 4))
    batch = permanent(A)
    assert np.allclose(batch, [brute_permanent(a) for a in A])
    assert np.isclose(permanent(np.ones((5, 5))), math.factorial(5))


@settings(deadline=None)
@given(st.integers(2, 5), st.integers(1, 3), st.integers(0, 10_000))
def test_boson_probabilities_sum_to_one_and_match_brute_force(m, n, seed):
    rng = np.random.default_rng(seed)
    U = haar_unitary(m, rng)
    s = np.bincount(rng.integers(0, m, n), minlength=m)
    patterns, p = boson_probabilities(U, s)
    assert np.isclose(p.sum(), 1.0) and (p >= 0).all()
    amplitudes = brute_amplitudes(U, s)
    assert np.allclose(p, [abs(amplitudes[tuple(t)]) ** 2 for t in patterns])


def test_hong_ou_mandel_dip():
    U = loop_unitary(np.array([np.pi / 4]))  # a 50:50 beam splitter between bin 0 and the loop
    patterns, p = boson_probabilities(U, np.array([1, 1]))
    assert np.isclose(p[[tuple(t) for t in patterns].index((1, 1))], 0.0)  # the two photons always bunch


def test_fock_states_count_and_sum():
    states = fock_states(5, 3)
    assert len(states) == math.comb(7, 3) and (states.sum(1) == 3).all() and len({tuple(t) for t in states}) == 35


def test_haar_unitary_is_unitary_and_loop_limits():
    rng = np.random.default_rng(0)
    check_unitary(haar_unitary(6, rng))
    assert np.allclose(loop_unitary(np.zeros(3)), np.eye(4))
    shift = loop_unitary(np.full(3, np.pi / 2))  # every bin is delayed by one through the loop
    assert np.allclose(np.abs(shift[1:, :-1]), np.eye(3)) and np.isclose(abs(shift[0, 3]), 1.0)
    check_unitary(loop_unitary(rng.uniform(0, np.pi, 5)))


def test_clifford_sampler_matches_exact_distribution():
    rng = np.random.default_rng(3)
    U, s = haar_unitary(4, rng), np.array([1, 1, 1, 0])
    patterns, p = boson_probabilities(U, s)
    samples = sample_boson_clifford(U, s, 4000, rng)
    index = {tuple(t): i for i, t in enumerate(patterns)}
    empirical = np.bincount([index[tuple(t)] for t in samples], minlength=len(p)) / len(samples)
    assert 0.5 * np.abs(empirical - p).sum() < 0.06  # 20 outcomes, 4000 samples: expected TVD about 0.03


def test_exact_sampling_and_loss():
    rng = np.random.default_rng(0)
    patterns, p = boson_probabilities(haar_unitary(3, rng), np.array([1, 1, 0]))
    samples = sample_from_table(patterns, p, 500, rng)
    assert (samples.sum(1) == 2).all()
    assert (apply_loss(samples, 1.0, rng) == samples).all() and (apply_loss(samples, 0.0, rng) == 0).all()


def test_bad_inputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="U="):
        check_unitary(np.ones((3, 3)))
    with pytest.raises(ValueError, match="U="):
        boson_probabilities(np.ones((2, 3)), np.array([1, 0]))
    with pytest.raises(ValueError, match="s="):
        boson_probabilities(np.eye(3), np.array([1, -1, 1]))
    with pytest.raises(ValueError, match="s="):
        boson_probabilities(np.eye(3), np.array([1, 1]))
    with pytest.raises(ValueError, match="A="):
        permanent(np.ones((2, 3)))
    with pytest.raises(ValueError, match="m="):
        haar_unitary(0, rng)
    with pytest.raises(ValueError, match="n="):
        fock_states(60, 20)  # C(79, 20) patterns: too many to enumerate
    with pytest.raises(ValueError, match="eta="):
        apply_loss(np.array([1, 0]), 1.5, rng)
    with pytest.raises(ValueError, match="num_samples="):
        sample_boson_clifford(np.eye(2), np.array([1, 0]), 0, rng)
    with pytest.raises(ValueError, match="p="):
        sample_from_table(np.eye(2), np.array([0.7, 0.7]), 3, rng)
    with pytest.raises(ValueError, match="theta="):
        loop_unitary(np.array([np.nan]))


@pytest.mark.parametrize("m", [1, 2, 5, 12])
def test_haar_unitary_is_the_mezzadri_recipe_bit_for_bit(m):
    # issue 19: scipy.stats.unitary_group instead of the hand-written QR; same draws for the same generator
    rng = np.random.default_rng(7)
    Z = (rng.standard_normal((m, m)) + 1j * rng.standard_normal((m, m))) / np.sqrt(2.0)
    Q, R = np.linalg.qr(Z)
    reference = Q * (np.diag(R) / np.abs(np.diag(R)))[None, :]
    U = haar_unitary(m, np.random.default_rng(7))
    assert U.shape == (m, m)
    np.testing.assert_array_equal(U, reference)
    np.testing.assert_allclose(U.conj().T @ U, np.eye(m), atol=1e-12)
