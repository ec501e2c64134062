"""SAQNN (Tang, Zhang, Sun 2026): the constructive QNN in closed form, in JAX.

The circuit ``U = P(theta)^dag . Pad . prod_r [S(phi_r) V_r(x)] . P(theta)`` on m index qubits and d data
qubits (Fig. 1) has the overlap (proof of Thm 1, Appendix A)

    <0|U|0> = sum_{r=1..n} a_r^2 e^{i phi_r} <0|U_r(x)|0> + sum_{r=n+1..2^m-1} a_r^2        (A.1)

where ``a = P(theta)|0>`` are the real amplitudes of the multiplexor-R_y cascade (Sec. 3.1.1) and index 0 is
the padding term (its X on the first data qubit gives <0|X|0> = 0). The model output is
``f(x) = a' <0|U^dag O U|0>^{1/2} = a' |<0|U|0>|`` with O = |0><0| and the rescale coefficient a' (Thm 1).
``circuits.py`` builds the same circuit gate by gate (PennyLane, Qiskit); the tests check they agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_positive, fail

from .bases import basis_values, check_frequencies, check_inputs, in_float64

SQRT_EPS = 1e-12  # f = a' sqrt(|z|^2 + SQRT_EPS): keeps the gradient of |z| finite at z = 0 (ours, [INF])


def num_index_qubits(n: int) -> int:
    """m = ceil(log2(n + 1)): n basis terms plus the padding index 0 fit in 2^m states ([INF] from Appendix A)."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise fail("n", n, "an integer >= 1 (number of basis terms)")
    return max(1, math.ceil(math.log2(int(n) + 1)))


def num_parameters(n: int) -> int:
    """Trainable parameters of SAQNN with n terms: 2^m - 1 multiplexor angles theta plus n phases phi (Thm 2)."""
    return 2 ** num_index_qubits(n) - 1 + int(n)


def _tree(m: int) -> tuple[np.ndarray, np.ndarray]:
    """For every index r < 2^m: the bits of r (qubit 1 most significant) and the angle used on each qubit.

    The i-th multiplexor MR_y^(i) acts on qubit i, controlled by qubits 1..i-1 in state p, with angle
    theta_{2^{i-1} + p} (Sec. 3.1.1); 0-based that is ``theta[2^(i-1) - 1 + p]``.
    """
    r = np.arange(2**m)
    shifts = m - 1 - np.arange(m)
    bits = (r[:, None] >> shifts[None, :]) & 1  # (2^m, m)
    prefix = r[:, None] >> (shifts[None, :] + 1)  # value of qubits 1..i-1
    nodes = (1 << np.arange(m))[None, :] - 1 + prefix
    return bits, nodes


@in_float64
def amplitudes(theta, m: int):
    """Real amplitudes ``a = P(theta)|0>`` of the multiplexor-R_y cascade, (2^m,) float64.

    Each level multiplies by R_y(t)|0> = cos(t/2)|0> + sin(t/2)|1> on the branch selected by the earlier bits.
    """
    import jax.numpy as jnp

    bits, nodes = _tree(m)
    half = jnp.asarray(theta, dtype=jnp.float64)[nodes] / 2
    return jnp.prod(jnp.where(bits == 1, jnp.sin(half), jnp.cos(half)), axis=1)


def theta_for_amplitudes(a) -> np.ndarray:
    """Angles theta with ``P(theta)|0> = a`` for a non-negative unit vector a of length 2^m (Lemma 2, constructive).

    Each node splits the weight of its subtree: ``theta = 2 atan2(||a_right||, ||a_left||)``.
    """
    a = np.asarray(a, dtype=float)
    m = int(np.log2(a.size))
    if a.ndim != 1 or a.size != 2**m or (a < 0).any() or not np.isclose(np.linalg.norm(a), 1.0):
        raise fail("a", a, "a non-negative unit vector of length 2^m")
    theta = np.zeros(2**m - 1)
    for i in range(m):  # level i: 2^i nodes, each covering a block of 2^(m-i) indices
        blocks = (a**2).reshape(2**i, 2, -1).sum(-1)  # weight of the left (bit 0) and right (bit 1) halves
        theta[2**i - 1 : 2 ** (i + 1) - 1] = 2 * np.arctan2(np.sqrt(blocks[:, 1]), np.sqrt(blocks[:, 0]))
    return theta


@in_float64
def overlap_from_basis(theta, phi, values, m: int):
    """Eq. (A.1): ``<0|U|0>`` from the basis values ``<0|U_r(x)|0>`` (N, n) -> (N,) complex128."""
    import jax.numpy as jnp

    n = values.shape[1]
    a2 = amplitudes(theta, m) ** 2
    coefficients = a2[1 : n + 1] * jnp.exp(1j * jnp.asarray(phi, dtype=jnp.float64))  # |a_r|^2 e^{i phi_r}
    return values @ coefficients + jnp.sum(a2[n + 1 :])


@dataclass(frozen=True, eq=False)
class SAQNN:
    """The SAQNN architecture: a frequency set ``freqs`` (n, d), a basis and the rescale coefficient a'.

    Parameters are a dict ``{"theta": (2^m - 1,), "phi": (n,)}`` (``training.init_params`` draws them).
    Every method computes in float64 / complex128 whatever jax's x64 flag (``in_float64``).
    """

    freqs: np.ndarray
    basis: str = "fourier"
    rescale: float = 1.0

    def __post_init__(self) -> None:
        freqs = np.asarray(self.freqs)
        d = freqs.shape[1] if freqs.ndim == 2 else 0
        object.__setattr__(self, "freqs", check_frequencies(freqs, max(d, 1), self.basis))
        check_positive("rescale", self.rescale)

    @property
    def n(self) -> int:
        return len(self.freqs)

    @property
    def d(self) -> int:
        return self.freqs.shape[1]

    @property
    def m(self) -> int:
        return num_index_qubits(self.n)

    @property
    def num_qubits(self) -> int:
        """Circuit width: m index qubits + d data qubits (Fig. 1)."""
        return self.m + self.d

    @property
    def num_parameters(self) -> int:
        return num_parameters(self.n)

    @in_float64
    def basis_values(self, x):
        """``<0|U_r(x)|0>`` (N, n) after validating x."""
        return basis_values(check_inputs(x, self.d, self.basis), self.freqs, self.basis)

    @in_float64
    def overlap(self, params: dict, x):
        """``<0|U_{theta,phi}(x)|0>`` (N,) complex, eq. (A.1)."""
        return overlap_from_basis(params["theta"], params["phi"], self.basis_values(x), self.m)

    @in_float64
    def expval(self, params: dict, x):
        """``<0|U^dag O U|0> = |<0|U|0>|^2`` with the global observable O = |0><0| (Thm 1), (N,)."""
        import jax.numpy as jnp

        return jnp.abs(self.overlap(params, x)) ** 2

    @in_float64
    def __call__(self, params: dict, x):
        """Model output ``a' <0|U^dag O U|0>^{1/2}`` (Thm 1), (N,)."""
        return self.rescale * output_from_overlap(self.overlap(params, x))

    def construct(self, c) -> dict:
        """Parameters implementing the series ``sum_r c_r <0|U_r|0>`` exactly (proof of Thm 1).

        ``|a_r|^2 = |c_r| / a'`` and ``phi_r = arg c_r``; the slack ``1 - sum |c_r| / a'`` goes to the padding
        index 0 (App. A remark), so any ``a' >= sum_r |c_r|`` works.
        """
        c = np.asarray(c, dtype=complex)
        if c.shape != (self.n,) or not np.isfinite(c).all():
            raise fail("c", c, f"{self.n} finite coefficients")
        weights = np.abs(c) / self.rescale
        if weights.sum() > 1 + 1e-12:
            raise fail("c", c, f"sum |c_r| <= rescale a' = {self.rescale}")
        a2 = np.zeros(2**self.m)
        a2[1 : self.n + 1] = weights
        a2[0] = max(0.0, 1.0 - weights.sum())
        return {"theta": theta_for_amplitudes(np.sqrt(a2 / a2.sum())), "phi": np.angle(c)}

    @in_float64
    def coefficients(self, params: dict):
        """The series the circuit implements, ``a' |a_r|^2 e^{i phi_r}`` for r = 1..n, and the constant slack term."""
        import jax.numpy as jnp

        a2 = amplitudes(params["theta"], self.m) ** 2
        phi = jnp.asarray(params["phi"], dtype=jnp.float64)
        return self.rescale * a2[1 : self.n + 1] * jnp.exp(1j * phi), self.rescale * jnp.sum(a2[self.n + 1 :])


@in_float64
def output_from_overlap(z):
    """``|z|`` smoothed as ``sqrt(|z|^2 + SQRT_EPS)`` so that training never divides by zero."""
    import jax.numpy as jnp

    return jnp.sqrt(jnp.real(z) ** 2 + jnp.imag(z) ** 2 + SQRT_EPS)
