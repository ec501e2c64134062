"""Classical latents: distinguishable photons (exact and sampled), Gaussian, and the latent tables."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_quantum_latent import (
    boson_probabilities,
    distinguishable_probabilities,
    haar_unitary,
    latent_table,
    sample_distinguishable,
    sample_gaussian,
    sample_latent,
)


@settings(deadline=None)
@given(st.integers(2, 6), st.integers(1, 3), st.integers(0, 10_000))
def test_distinguishable_is_a_distribution_with_boson_marginals(m, n, seed):
    rng = np.random.default_rng(seed)
    U = haar_unitary(m, rng)
    s = np.bincount(rng.integers(0, m, n), minlength=m)
    patterns, q = distinguishable_probabilities(U, s)
    _, p = boson_probabilities(U, s)
    assert np.isclose(q.sum(), 1.0) and (q >= -1e-12).all()
    assert np.allclose(q @ patterns, p @ patterns)  # same mean photon number per mode: no interference in means


def test_single_photon_needs_no_interference():
    U = haar_unitary(4, np.random.default_rng(0))
    s = np.array([0, 1, 0, 0])
    assert np.allclose(distinguishable_probabilities(U, s)[1], boson_probabilities(U, s)[1])


def test_distinguishable_sampler_matches_exact():
    rng = np.random.default_rng(2)
    U, s = haar_unitary(4, rng), np.array([1, 1, 0, 0])
    patterns, q = distinguishable_probabilities(U, s)
    samples = sample_distinguishable(U, s, 5000, rng)
    index = {tuple(t): i for i, t in enumerate(patterns)}
    empirical = np.bincount([index[tuple(t)] for t in samples], minlength=len(q)) / len(samples)
    assert 0.5 * np.abs(empirical - q).sum() < 0.04


def test_latent_tables_are_standardised():
    rng = np.random.default_rng(0)
    U, s = haar_unitary(5, rng), np.array([1, 1, 1, 0, 0])
    for kind in ("quantum", "distinguishable"):
        table = latent_table(kind, U, s)
        assert np.allclose(table.p @ table.z, 0.0) and np.allclose(table.p @ table.z**2, 1.0)
    assert sample_latent("gaussian", U, s, 7, rng).shape == (7, 5)
    assert sample_gaussian(3, 2, rng).shape == (3, 2)


def test_bad_inputs():
    rng = np.random.default_rng(0)
    U = haar_unitary(3, rng)
    with pytest.raises(ValueError, match="kind="):
        sample_latent("uniform", U, np.array([1, 0, 0]), 3, rng)
    with pytest.raises(ValueError, match="num_samples="):
        sample_distinguishable(U, np.array([1, 0, 0]), 0, rng)
    with pytest.raises(ValueError, match="dim="):
        sample_gaussian(3, 0, rng)
    with pytest.raises(ValueError, match="U="):
        distinguishable_probabilities(2 * U, np.array([1, 0, 0]))
