"""The quantum latent source: a boson sampler (interferometer, Fock probabilities by permanents, sampling).

Conventions (standard linear optics, our notation): an ``m``-mode interferometer is an ``m x m`` unitary
``U`` acting on creation operators as ``a_i^dagger -> sum_j U[j, i] a_j^dagger``, so column ``i`` is the
input mode and row ``j`` the output mode. An input occupation ``s`` and an output occupation ``t`` (both of
length ``m``, summing to the photon number ``n``) select the ``n x n`` matrix ``U_{t,s}`` whose rows repeat
output mode ``j`` ``t_j`` times and whose columns repeat input mode ``i`` ``s_i`` times. Then

    P_bos(t) = |Perm(U_{t,s})|^2 / (prod_i s_i! prod_j t_j!)        (boson sampling, Aaronson-Arkhipov)

and the quantum latent vector of the paper is the photon-count vector ``t`` of one shot (standardised per
mode before it enters the generator; see ``latents.py``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from icml26_shared import check_array, check_closed_interval, check_int, fail
from scipy.special import gammaln
from scipy.stats import unitary_group

UNITARY_TOL = 1e-8  # ||U^dagger U - I||_max above this is not an interferometer
MAX_PERMANENT_SIZE = 20  # Ryser's 2^n subsets are enumerated at once: n <= 20 keeps it in memory
MAX_PATTERNS = 1_000_000  # exact enumeration above this many Fock states: use the Clifford-Clifford sampler


def _subset_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All 2^n subsets of [n] as 0/1 rows and the Ryser sign (-1)^(n - |S|) of each."""
    bits = ((np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1).astype(float)
    signs = (-1.0) ** (n - bits.sum(axis=1))
    return bits, signs


def permanent(A: np.ndarray) -> np.ndarray:
    """Permanent of a square matrix, or of a batch ``(..., n, n)``, by Ryser's formula.

    Perm(A) = (-1)^n sum_{S subset [n]} (-1)^{|S|} prod_i sum_{j in S} A[i, j]   (Ryser 1963)

    Vectorised over all subsets at once: O(2^n n^2) work per matrix, fine for the n <= 20 used here.
    """
    A = check_array("A", A, ndim=None)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise fail("A", A, "a square matrix (n, n) or a batch (..., n, n)")
    n = A.shape[-1]
    check_int("A.shape[-1]", n, 1, MAX_PERMANENT_SIZE)
    bits, signs = _subset_table(n)
    row_sums = np.einsum("sj,...ij->...si", bits, A)  # sum_{j in S} A[i, j] for every subset S and row i
    return np.einsum("s,...s->...", signs, row_sums.prod(axis=-1))


def check_unitary(U: np.ndarray, name: str = "U") -> np.ndarray:
    """``U`` as a complex (m, m) array, or a ValueError if it is not unitary to ``UNITARY_TOL``."""
    U = check_array(name, U, ndim=2).astype(complex)
    if U.shape[0] != U.shape[1]:
        raise fail(name, U, "a square (m, m) unitary")
    error = np.abs(U.conj().T @ U - np.eye(U.shape[0])).max()
    if error > UNITARY_TOL:
        raise fail(name, U, f"a unitary matrix (max |U^dagger U - I| = {error:.2e} > {UNITARY_TOL:g})")
    return U


def check_occupation(s: np.ndarray, m: int, name: str = "s") -> np.ndarray:
    """An occupation vector: ``m`` non-negative integers with at least one photon."""
    s = check_array(name, s, ndim=1)
    if s.shape[0] != m or not np.all(s == np.round(s)) or s.min() < 0 or s.sum() < 1:
        raise fail(name, s, f"{m} non-negative integer photon counts with a positive total")
    return s.astype(int)


def haar_unitary(m: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random ``m x m`` unitary from ``scipy.stats.unitary_group``.

    scipy draws it as Mezzadri (2007): QR of a complex Ginibre matrix with the phases of R fixed; for the same
    generator it is bit-identical to that recipe written out (tested).
    """
    check_int("m", m, 1)
    return unitary_group.rvs(m, random_state=rng).reshape(m, m)  # m = 1 comes back as a 1-element array


def beam_splitter(theta: float) -> np.ndarray:
    """The real 2x2 beam splitter [[cos theta, -sin theta], [sin theta, cos theta]] (ORCA's sign convention)."""
    c, s_ = np.cos(theta), np.sin(theta)
    return np.array([[c, -s_], [s_, c]])


def loop_unitary(theta: np.ndarray) -> np.ndarray:
    """The ``(m+1) x (m+1)`` unitary of a single-loop time-bin interferometer (TBI, ORCA PT-Series).

    Time bin ``i`` (mode ``i``) meets the loop (mode ``m``) on a beam splitter of angle ``theta[i]``; one port
    leaves as output bin ``i``, the other stays in the loop. The last output mode holds the photons left in
    the loop. ``U = B_{m-1} ... B_1 B_0`` (a staircase of 2x2 beam splitters on (bin i, loop)).
    """
    theta = check_array("theta", theta, ndim=1).astype(float)
    m = theta.shape[0]
    U = np.eye(m + 1, dtype=complex)
    for i, angle in enumerate(theta):
        B = np.eye(m + 1, dtype=complex)
        B[np.ix_([i, m], [i, m])] = beam_splitter(angle)
        U = B @ U
    return U


def fock_states(m: int, n: int) -> np.ndarray:
    """All ``C(m+n-1, n)`` output patterns of ``n`` photons in ``m`` modes, as counts ``(K, m)``."""
    check_int("m", m, 1)
    check_int("n", n, 1)
    count = math.comb(m + n - 1, n)
    if count > MAX_PATTERNS:
        raise fail("n", n, f"at most {MAX_PATTERNS} Fock states for exact enumeration (got {count}); sample instead")
    modes = np.array(list(itertools.combinations_with_replacement(range(m), n)), dtype=int)
    return np.stack([np.bincount(row, minlength=m) for row in modes])


def fock_submatrices(U: np.ndarray, s: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """The batch of ``U_{t,s}`` for every output pattern ``t`` (rows repeat by t, columns by s)."""
    cols = np.repeat(np.arange(len(s)), s)
    rows = np.stack([np.repeat(np.arange(len(t)), t) for t in patterns])
    return U[rows][:, :, cols]


def log_factorial_product(counts: np.ndarray) -> np.ndarray:
    """log prod_j counts_j! along the last axis."""
    return gammaln(np.asarray(counts) + 1.0).sum(axis=-1)


def boson_probabilities(U: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution of indistinguishable photons: ``(patterns (K, m), probabilities (K,))``.

    P_bos(t) = |Perm(U_{t,s})|^2 / (prod s! prod t!)   (quantum interference of all n! photon paths)
    """
    U = check_unitary(U)
    s = check_occupation(s, U.shape[0])
    patterns = fock_states(U.shape[0], int(s.sum()))
    amplitude = permanent(fock_submatrices(U, s, patterns))
    p = np.abs(amplitude) ** 2 * np.exp(-log_factorial_product(s) - log_factorial_product(patterns))
    return patterns, p


def apply_loss(counts: np.ndarray, eta: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform photon loss with transmission ``eta``: each detected photon survives independently (binomial).

    Uniform loss commutes with a linear interferometer, so it can be applied at the detectors.
    """
    eta = check_closed_interval("eta", eta, 0.0, 1.0)
    counts = check_array("counts", counts, ndim=(1, 2)).astype(int)
    return rng.binomial(counts, eta)


def sample_from_table(patterns: np.ndarray, p: np.ndarray, num_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``num_samples`` rows of ``patterns`` drawn with probabilities ``p`` (exact sampling by enumeration)."""
    check_int("num_samples", num_samples, 1)
    p = check_array("p", p, ndim=1)
    if p.min() < -1e-12 or abs(p.sum() - 1.0) > 1e-8:
        raise fail("p", p, "probabilities: non-negative and summing to 1")
    idx = rng.choice(len(p), size=num_samples, p=np.clip(p, 0.0, None) / np.clip(p, 0.0, None).sum())
    return patterns[idx]


def sample_boson_clifford(U: np.ndarray, s: np.ndarray, num_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Exact boson samples without enumerating outcomes: Clifford & Clifford (2018), algorithm B.

    With A = U[:, inputs] (columns randomly permuted), photon k lands in mode i with weight
    w_i = |sum_{l<=k} A[i, l] Perm(A[r_1..r_{k-1}, [k] \\ l])|^2 (Laplace expansion of the k x k permanent);
    cost O(n 2^n) per sample instead of C(m+n-1, n) permanents. Returns counts ``(num_samples, m)``.
    """
    U = check_unitary(U)
    m = U.shape[0]
    s = check_occupation(s, m)
    check_int("num_samples", num_samples, 1)
    n = int(s.sum())
    cols = np.repeat(np.arange(m), s)
    out = np.zeros((num_samples, m), dtype=int)
    for b in range(num_samples):
        A = U[:, rng.permutation(cols)]
        w = np.abs(A[:, 0]) ** 2  # k = 1: the first photon alone
        r = [int(rng.choice(m, p=w / w.sum()))]
        for k in range(2, n + 1):
            B = A[r, :k]  # (k-1, k)
            minors = np.stack([np.delete(B, l, axis=1) for l in range(k)])  # (k, k-1, k-1)
            w = np.abs(A[:, :k] @ permanent(minors)) ** 2
            r.append(int(rng.choice(m, p=w / w.sum())))
        out[b] = np.bincount(r, minlength=m)
    return out
