"""Log-domain Sinkhorn, entropic OT and the Sinkhorn divergence S_eps with its dual potentials.

Conventions (Feydy et al. 2019, used throughout the paper): ground cost c(x, y) = ||x - y||^2 and

    OT_eps(alpha, beta) = min_{pi in Pi(alpha, beta)} <c, pi> + eps KL(pi || alpha x beta)          (eq. 1)
    S_eps(alpha, beta)  = OT_eps(alpha, beta) - 1/2 OT_eps(alpha, alpha) - 1/2 OT_eps(beta, beta)  (eq. 2)

For discrete alpha = sum_i a_i delta_{x_i}, beta = sum_j b_j delta_{y_j} the dual potentials (f, g) solve
the fixed point f_i = -eps log sum_j b_j exp((g_j - c_ij) / eps) (and symmetrically for g), and then
OT_eps = <a, f> + <b, g>. The same soft-min formula extends a potential to any point, which is how the
first variation of S_eps (a function on R^p) is evaluated away from the support.

numpy, not JAX: measured on this machine (README), a jitted JAX loop is 1.3-1.7x faster per warm solve
but recompiles for every new problem shape (0.2-0.5 s), and the arm sizes change in every replication.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, check_positive, fail

TOL = 1e-6  # L1 marginal violation at which Sinkhorn stops
MAX_ITER = 10_000
WEIGHT_SUM_TOL = 1e-6


@dataclass(frozen=True)
class Potentials:
    """Dual potentials of OT_eps(alpha, beta): f on the support of alpha (n,), g on that of beta (m,)."""

    f: np.ndarray
    g: np.ndarray
    value: float  # OT_eps(alpha, beta) = <a, f> + <b, g>
    n_iter: int


@dataclass(frozen=True)
class Divergence:
    """S_eps(alpha, beta) and its first variations phi_alpha = f_ab - f_aa, phi_beta = g_ab - g_bb."""

    value: float
    phi_x: np.ndarray  # (n,) first variation of S_eps w.r.t. alpha, at the points x
    phi_y: np.ndarray  # (m,) first variation of S_eps w.r.t. beta, at the points y
    ot_xy: Potentials
    ot_xx: Potentials
    ot_yy: Potentials


def squared_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cost matrix c_ij = ||x_i - y_j||^2 of points x (n, p) and y (m, p) -> (n, m)."""
    x = check_array("x", x, ndim=2)
    y = check_array("y", y, ndim=2)
    if x.shape[1] != y.shape[1]:
        raise fail("y", y, f"points of dimension {x.shape[1]} like x")
    sq = (x**2).sum(1)[:, None] + (y**2).sum(1)[None, :] - 2.0 * x @ y.T
    return np.maximum(sq, 0.0)  # round-off can make a zero distance slightly negative


def soft_min(cost: np.ndarray, h: np.ndarray, log_w: np.ndarray, eps: float) -> np.ndarray:
    """-eps log sum_j w_j exp((h_j - cost_ij) / eps) for every row i: the Sinkhorn/c-transform map."""
    z = log_w[None, :] + (h[None, :] - cost) / eps
    top = z.max(axis=1)
    return -eps * (top + np.log(np.exp(z - top[:, None]).sum(axis=1)))


def check_weights(name: str, w: np.ndarray | None, n: int) -> np.ndarray:
    """Probability weights of length n (uniform when None): positive, finite, summing to one."""
    if w is None:
        return np.full(n, 1.0 / n)
    w = check_array(name, w, ndim=1, dtype=float)
    if w.shape[0] != n:
        raise fail(name, w, f"{n} weights, one per point")
    if (w <= 0).any() or abs(w.sum() - 1.0) > WEIGHT_SUM_TOL:
        raise fail(name, w, "positive weights summing to 1")
    return w


def _warn_unconverged(err: float, n_iter: int, tol: float) -> None:
    warnings.warn(
        f"Sinkhorn stopped after {n_iter} iterations with marginal error {err:.2e} > tol={tol:g}",
        RuntimeWarning,
        stacklevel=3,
    )


def sinkhorn_log(
    a: np.ndarray, b: np.ndarray, cost: np.ndarray, eps: float, tol: float = TOL, max_iter: int = MAX_ITER
) -> Potentials:
    """Log-domain Sinkhorn for OT_eps(a, b) on a cost matrix (n, m); alternating soft-min updates (eq. 3).

    Stops when the L1 violation of the second marginal is below ``tol``; warns (RuntimeWarning) if
    ``max_iter`` is reached first. The potentials are normalised so that OT_eps = <a, f> + <b, g>.
    """
    cost = check_array("cost", cost, ndim=2, dtype=float)
    a = check_weights("a", a, cost.shape[0])
    b = check_weights("b", b, cost.shape[1])
    eps = check_positive("eps", eps)
    max_iter = check_int("max_iter", max_iter, 1)
    tol = check_positive("tol", tol)
    log_a, log_b, cost_t = np.log(a), np.log(b), np.ascontiguousarray(cost.T)
    f, g = np.zeros(cost.shape[0]), np.zeros(cost.shape[1])
    n_iter, err = 0, np.inf
    while err >= tol and n_iter < max_iter:
        f = soft_min(cost, g, log_b, eps)  # eq. (3): f = -eps log sum_j b_j exp((g_j - c_ij)/eps)
        g_new = soft_min(cost_t, f, log_a, eps)
        # before the g update, the plan's second marginal is b_j exp((g_j - g_new_j)/eps)
        err = float(np.sum(b * np.abs(np.expm1((g - g_new) / eps))))
        g = g_new
        n_iter += 1
    if err >= tol:
        _warn_unconverged(err, n_iter, tol)
    return Potentials(f=f, g=g, value=float(a @ f + b @ g), n_iter=n_iter)


def sinkhorn_symmetric(
    a: np.ndarray, cost: np.ndarray, eps: float, tol: float = TOL, max_iter: int = MAX_ITER
) -> Potentials:
    """OT_eps(alpha, alpha) by the averaged fixed point f <- (f + T(f)) / 2 (Feydy et al. 2019, eq. 3 sym.)."""
    cost = check_array("cost", cost, ndim=2, dtype=float)
    if cost.shape[0] != cost.shape[1]:
        raise fail("cost", cost, "a square cost matrix")
    a = check_weights("a", a, cost.shape[0])
    eps = check_positive("eps", eps)
    max_iter = check_int("max_iter", max_iter, 1)
    tol = check_positive("tol", tol)
    log_a = np.log(a)
    f = np.zeros(cost.shape[0])
    n_iter, err = 0, np.inf
    while err >= tol and n_iter < max_iter:
        t = soft_min(cost, f, log_a, eps)
        err = float(np.sum(a * np.abs(np.expm1((f - t) / eps))))  # marginal violation of the plan (f, f)
        f = 0.5 * (f + t)
        n_iter += 1
    if err >= tol:
        _warn_unconverged(err, n_iter, tol)
    return Potentials(f=f, g=f, value=float(2.0 * a @ f), n_iter=n_iter)


def ot_eps(
    x: np.ndarray, y: np.ndarray, eps: float, a: np.ndarray | None = None, b: np.ndarray | None = None
) -> Potentials:
    """OT_eps (eq. 1) between weighted point clouds x (n, p) and y (m, p); uniform weights when None."""
    return sinkhorn_log(a, b, squared_distances(x, y), eps)


def extend_potential(z: np.ndarray, support: np.ndarray, weights: np.ndarray, h: np.ndarray, eps: float) -> np.ndarray:
    """The potential at new points z (k, p): -eps log sum_j w_j exp((h_j - c(z, y_j)) / eps) over the support.

    This is the same soft-min that defines a Sinkhorn potential at its fixed point, so on the support
    itself it returns the potential of the other side (f from g, or f from f for a symmetric problem).
    """
    z = check_array("z", z, ndim=2)
    support = check_array("support", support, ndim=2)
    weights = check_weights("weights", weights, len(support))
    h = check_array("h", h, ndim=1, dtype=float)
    if h.shape[0] != len(support):
        raise fail("h", h, f"{len(support)} potential values, one per support point")
    eps = check_positive("eps", eps)
    return soft_min(squared_distances(z, support), h, np.log(weights), eps)


def sinkhorn_divergence(
    x: np.ndarray, y: np.ndarray, eps: float, a: np.ndarray | None = None, b: np.ndarray | None = None
) -> Divergence:
    """S_eps(alpha, beta) (eq. 2) with the first variations at the support points.

    phi_x = f_ab - f_aa is the gradient of S_eps w.r.t. alpha and phi_y = g_ab - g_bb that w.r.t. beta
    (Feydy et al. 2019); they are the pieces of the efficient influence function (eq. 6).
    """
    x = check_array("x", x, ndim=2)
    y = check_array("y", y, ndim=2)
    a = check_weights("a", a, len(x))
    b = check_weights("b", b, len(y))
    ot_xy = ot_eps(x, y, eps, a, b)
    ot_xx = sinkhorn_symmetric(a, squared_distances(x, x), eps)
    ot_yy = sinkhorn_symmetric(b, squared_distances(y, y), eps)
    value = ot_xy.value - 0.5 * ot_xx.value - 0.5 * ot_yy.value  # eq. (2)
    return Divergence(value, ot_xy.f - ot_xx.f, ot_xy.g - ot_yy.f, ot_xy, ot_xx, ot_yy)


@dataclass(frozen=True)
class HessianKernel:
    """The kernel of the Hessian of S_eps at the null alpha = beta = P (our derivation, README [INF]).

    Perturbing P by densities rho_1, rho_0 (mean zero) gives
        S_eps(P(1 + t rho_1), P(1 + t rho_0)) = t^2 / 2 <delta, H delta>_P + o(t^2),  delta = rho_1 - rho_0,
    with H = eps K (I - K^2)^{-1} on mean-zero functions, where K is the Markov operator of the symmetric
    Sinkhorn plan of P: (K u)(x) = int k(x, y) u(y) dP(y), k(x, y) = exp((f(x) + f(y) - c(x, y)) / eps).
    So S_eps is locally 1/2 MMD^2 of the counterfactual mean embeddings in the RKHS of h (eq. 7).
    P is the empirical law of ``support``; h is evaluated anywhere through the extended potential f, via
    H = eps (K + K G K) with G = K (I - K^2)^{-1}, so no eigenvalue is ever inverted.
    """

    support: np.ndarray  # (m, p) points of the reference law P
    f: np.ndarray  # (m,) symmetric Sinkhorn potential of P
    eps: float
    middle: np.ndarray  # (m, m) U diag(lambda / (1 - lambda^2)) U^T / m on the mean-zero subspace

    @classmethod
    def fit(cls, support: np.ndarray, eps: float) -> HessianKernel:
        """Solve OT_eps(P, P) on the uniform law of ``support`` (m, p) and spectrally invert I - K^2."""
        support = check_array("support", support, ndim=2)
        eps = check_positive("eps", eps)
        m = len(support)
        weights = np.full(m, 1.0 / m)
        sym = sinkhorn_symmetric(weights, squared_distances(support, support), eps)
        gibbs = np.exp((sym.f[:, None] + sym.f[None, :] - squared_distances(support, support)) / eps)
        center = np.eye(m) - 1.0 / m  # projects out the constants, K's eigenvector with eigenvalue 1
        lam, vec = np.linalg.eigh(center @ (gibbs / m) @ center)
        lam = np.clip(lam, 0.0, 1.0 - 1e-12)  # K is positive semi-definite and Markov: 0 <= lambda < 1 here
        middle = (vec * (lam / (1.0 - lam**2))) @ vec.T / m
        return cls(support=support, f=sym.f, eps=eps, middle=middle)

    def potential(self, z: np.ndarray) -> np.ndarray:
        """The symmetric potential f extended to points z (k, p) by its soft-min fixed point."""
        m = len(self.support)
        return extend_potential(z, self.support, np.full(m, 1.0 / m), self.f, self.eps)

    def _centred_gibbs(self, z: np.ndarray, f_z: np.ndarray, w: np.ndarray, f_w: np.ndarray) -> np.ndarray:
        """k(z_i, w_j) - 1 with k(x, y) = exp((f(x) + f(y) - c(x, y)) / eps)."""
        return np.exp((f_z[:, None] + f_w[None, :] - squared_distances(z, w)) / self.eps) - 1.0

    def __call__(self, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The Hessian kernel matrix h(z_i, w_j) (k, l) = eps [k(z, w) - 1 + (K G K)(z, w)] (eq. 7)."""
        z = check_array("z", z, ndim=2)
        w = check_array("w", w, ndim=2)
        f_z, f_w = self.potential(z), self.potential(w)
        rows_z = self._centred_gibbs(z, f_z, self.support, self.f)
        rows_w = self._centred_gibbs(w, f_w, self.support, self.f)
        return self.eps * (self._centred_gibbs(z, f_z, w, f_w) + rows_z @ self.middle @ rows_w.T)
