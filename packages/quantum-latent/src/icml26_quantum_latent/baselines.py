"""Classical latent baselines: distinguishable photons through the same interferometer, and Gaussian noise.

Distinguishable photons are the paper's key control: the same ``U`` and input ``s``, the same per-mode mean
photon numbers, but no interference. Each photon is routed independently (photon from input mode ``i``
lands in output mode ``j`` with probability |U[j, i]|^2), so

    P_dist(t) = Perm(|U_{t,s}|^2) / prod_j t_j!

(the permanent of a non-negative matrix counts the n!/prod t! routings with counts t, each prod t! times).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int

from .method import check_occupation, check_unitary, fock_states, fock_submatrices, log_factorial_product, permanent


def distinguishable_probabilities(U: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution of distinguishable photons: ``(patterns (K, m), probabilities (K,))``."""
    U = check_unitary(U)
    s = check_occupation(s, U.shape[0])
    patterns = fock_states(U.shape[0], int(s.sum()))
    weight = permanent(np.abs(fock_submatrices(U, s, patterns)) ** 2).real
    return patterns, weight * np.exp(-log_factorial_product(patterns))


def sample_distinguishable(U: np.ndarray, s: np.ndarray, num_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Counts ``(num_samples, m)`` of distinguishable photons, each routed on its own by |U[:, i]|^2."""
    U = check_unitary(U)
    m = U.shape[0]
    s = check_occupation(s, m)
    check_int("num_samples", num_samples, 1)
    out = np.zeros((num_samples, m), dtype=int)
    for i in np.repeat(np.arange(m), s):
        p = np.abs(U[:, i]) ** 2
        out += rng.multinomial(1, p / p.sum(), size=num_samples)
    return out


def sample_gaussian(num_samples: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """The standard latent of GANs: ``(num_samples, dim)`` draws of N(0, I)."""
    check_int("num_samples", num_samples, 1)
    check_int("dim", dim, 1)
    return rng.standard_normal((num_samples, dim))
