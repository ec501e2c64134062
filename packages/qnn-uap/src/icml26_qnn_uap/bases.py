"""Function bases of SAQNN's spectrum selection: frequency sets and the single-term values <0|U_r(x)|0>.

Fourier (Sec. 3.1.2): ``U_r(x) = (x)_l R_z(-2 j_l x_l)`` so ``<0|U_r|0> = exp(i j.x)``, inputs in [-pi, pi]^d
(periodic, so values outside are allowed and wrap). Chebyshev (Appendix C): ``R_y(2 j_l arccos x_l)`` so
``<0|U_r|0> = prod_l T_{j_l}(x_l)``, inputs in [-1, 1]^d (arccos is undefined outside).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from icml26_shared import check_array, check_choice, check_int, fail

BASES = ("fourier", "chebyshev")


def in_float64(fn):
    """Run ``fn`` with jax's 64-bit mode on: the package's one precision rule (float64 / complex128).

    Every public computation (basis values, amplitudes, the overlap, the model output, ``fit``, ``predict``)
    runs in double precision whatever the caller's ``jax_enable_x64`` flag, so a result does not depend on it
    (issue 16.8: ``SAQNN.__call__`` gave complex64 results, 1.4e-7 apart, unless the caller had enabled x64).
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import jax

        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper


def fourier_frequencies(k: int, d: int) -> np.ndarray:
    """The k-truncated Fourier set ``{j in Z^d : ||j||_inf <= k}`` (Sec. 3), ``(n, d)`` with n = (2k+1)^d."""
    k = check_int("k", k, 0)
    d = check_int("d", d, 1)
    return np.array(list(itertools.product(range(-k, k + 1), repeat=d)), dtype=np.int64)


def chebyshev_degrees(k: int, d: int, norm: str = "inf") -> np.ndarray:
    """Chebyshev multi-degrees ``{j in N^d : ||j|| <= k}`` (Appendix C), ``(n, d)``.

    ``norm="inf"`` is the paper's k-truncated tensor set ((k+1)^d terms); ``norm="total"`` bounds the
    total degree ``sum_l j_l <= k`` (our [INF] reading of the n=6, d=2 experiment on f3).
    """
    k = check_int("k", k, 0)
    d = check_int("d", d, 1)
    check_choice("norm", norm, ("inf", "total"))
    grid = itertools.product(range(k + 1), repeat=d)
    keep = [j for j in grid if norm == "inf" or sum(j) <= k]
    return np.array(keep, dtype=np.int64)


def check_frequencies(freqs, d: int, basis: str) -> np.ndarray:
    """Validate a frequency set: a non-empty ``(n, d)`` integer array without duplicates (>= 0 for Chebyshev)."""
    check_choice("basis", basis, BASES)
    arr = check_array("freqs", freqs, ndim=2)
    if not np.issubdtype(arr.dtype, np.integer):
        raise fail("freqs", arr, "integer frequencies")
    if arr.shape[1] != d:
        raise fail("freqs", arr, f"frequency vectors of length d={d}")
    if len({tuple(j) for j in arr.tolist()}) != len(arr):
        raise fail("freqs", arr, "distinct frequency vectors")
    if basis == "chebyshev" and (arr < 0).any():
        raise fail("freqs", arr, "non-negative Chebyshev degrees")
    return arr.astype(np.int64)


def check_inputs(x, d: int, basis: str) -> np.ndarray:
    """Validate inputs ``(N, d)``: finite, right width, and inside [-1, 1] for the Chebyshev basis."""
    arr = check_array("x", x, ndim=2, dtype=float)
    if arr.shape[1] != d:
        raise fail("x", arr, f"inputs with last dimension d={d}")
    if basis == "chebyshev" and (np.abs(arr) > 1).any():
        raise fail("x", arr, "Chebyshev inputs inside [-1, 1] (arccos is undefined outside)")
    return arr


@in_float64
def basis_values(x, freqs, basis: str):
    """``<0|U_r(x)|0>`` for every input and term, ``(N, n)`` complex128 (jax.numpy, differentiable in nothing).

    Fourier: ``exp(i j^(r).x)``; Chebyshev: ``prod_l cos(j_l arccos x_l) = prod_l T_{j_l}(x_l)``.
    """
    import jax.numpy as jnp

    x = jnp.asarray(x, dtype=jnp.float64)
    freqs = jnp.asarray(freqs, dtype=x.dtype)
    if basis == "fourier":
        return jnp.exp(1j * (x @ freqs.T))
    angles = jnp.arccos(x)[:, None, :] * freqs[None, :, :]  # (N, n, d)
    return jnp.prod(jnp.cos(angles), axis=-1).astype(jnp.complex128)
