"""Datasets: the synthetic boson target and the QM9 files of the qm9pack wheel."""

import numpy as np
import pytest
from icml26_quantum_latent import haar_unitary
from icml26_quantum_latent.data import boson_target, qm9_folder


def test_boson_target_is_a_noisy_identity_like_map():
    rng = np.random.default_rng(0)
    U, s = haar_unitary(4, rng), np.array([1, 1, 0, 0])
    x = boson_target(U, s, 500, rng, beta=0.0, sigma=1e-6)
    assert x.shape == (500, 4)
    assert len(np.unique(np.round(x, 3), axis=0)) <= 10  # beta = 0: the 10 standardised Fock patterns


def test_qm9_files_are_shipped():
    folder = qm9_folder()
    with open(folder / "qm9_part1.csv") as fh:
        header, first = next(fh), next(fh)
    assert header.split(",")[2] == "SMILES" and first.split('"', 4)[3] == "C"


def test_bad_inputs():
    rng = np.random.default_rng(0)
    U, s = haar_unitary(3, rng), np.array([1, 0, 0])
    with pytest.raises(ValueError, match="num_samples="):
        boson_target(U, s, 0, rng)
    with pytest.raises(ValueError, match="sigma="):
        boson_target(U, s, 5, rng, sigma=0.0)
    with pytest.raises(ValueError, match="d_hidden="):
        boson_target(U, s, 5, rng, d_hidden=0)
