"""Analytic Gaussian mixtures: exact forward marginals, scores, log densities and information.

Under the VP SDE a component ``N(m_k, Sigma_k)`` stays Gaussian:
``p_t(x | k) = N(mu(t) m_k, mu(t)^2 Sigma_k + std(t)^2 I)``. With ``Sigma_k = U_k diag(lambda_k) U_k^T``
the marginal covariance has the same eigenvectors and eigenvalues ``mu^2 lambda + std^2``, so every
score and log density is exact and cheap. Class label = component index.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_closed_interval, check_int, check_positive, fail

from .method import VPSchedule

LOG_2PI = float(np.log(2 * np.pi))


class GaussianMixture:
    """Mixture ``sum_k w_k N(m_k, Sigma_k)``: weights (K,), means (K, D), covariances (K, D, D)."""

    def __init__(self, weights, means, covariances):
        weights = check_array("weights", weights, ndim=1, dtype=float)
        if np.any(weights < 0) or abs(weights.sum() - 1) > 1e-8:
            raise fail("weights", weights, "non-negative weights summing to 1")
        means = check_array("means", means, ndim=2, dtype=float)
        if means.shape[0] != weights.shape[0]:
            raise fail("means", means, f"one mean per weight ({weights.shape[0]})")
        covariances = check_array("covariances", covariances, ndim=3, dtype=float)
        if covariances.shape != (*means.shape, means.shape[1]):
            raise fail("covariances", covariances, f"shape {(*means.shape, means.shape[1])}")
        if not np.allclose(covariances, np.swapaxes(covariances, 1, 2), atol=1e-10):
            raise fail("covariances", covariances, "symmetric positive definite matrices (not symmetric)")
        eigvals, eigvecs = np.linalg.eigh(covariances)
        if np.any(eigvals <= 0):
            raise fail("covariances", covariances, f"positive definite matrices (min eigenvalue {eigvals.min():.3g})")
        self._set(weights, means, eigvals, eigvecs)

    @classmethod
    def _from_eig(cls, weights, means, eigvals, eigvecs) -> GaussianMixture:
        mixture = cls.__new__(cls)
        mixture._set(weights, means, eigvals, eigvecs)
        return mixture

    def _set(self, weights, means, eigvals, eigvecs) -> None:
        self.weights, self.means, self.eigvals, self.eigvecs = weights, means, eigvals, eigvecs

    @property
    def n_components(self) -> int:
        return self.weights.shape[0]

    @property
    def dim(self) -> int:
        return self.means.shape[1]

    @property
    def covariances(self) -> np.ndarray:
        """Sigma_k = U diag(lambda) U^T, (K, D, D)."""
        return np.einsum("kij,kj,klj->kil", self.eigvecs, self.eigvals, self.eigvecs)

    def marginal(self, schedule: VPSchedule, t: float) -> GaussianMixture:
        """The forward marginal p_t: means mu(t) m_k, eigenvalues mu(t)^2 lambda + std(t)^2."""
        t = check_closed_interval("t", t, 0.0, 1.0)  # a time of the schedule
        mu, std = float(schedule.mu(t)), float(schedule.std(t))
        return GaussianMixture._from_eig(self.weights, mu * self.means, mu**2 * self.eigvals + std**2, self.eigvecs)

    def _check_x(self, x) -> np.ndarray:
        x = check_array("x", x, ndim=2, dtype=float)
        if x.shape[1] != self.dim:
            raise fail("x", x, f"points of dimension {self.dim}")
        return x

    def _whitened(self, x) -> np.ndarray:
        """U_k^T (x - m_k) per component, (K, n, D) (batched BLAS matmul)."""
        return np.matmul(x[None] - self.means[:, None, :], self.eigvecs)

    def component_log_prob(self, x) -> np.ndarray:
        """log N(x; m_k, Sigma_k), (n, K)."""
        x = self._check_x(x)
        y = self._whitened(x)
        maha = np.sum(y**2 / self.eigvals[:, None, :], axis=2)  # (K, n)
        logdet = np.sum(np.log(self.eigvals), axis=1)
        return -0.5 * (maha.T + logdet[None] + self.dim * LOG_2PI)

    def log_prob(self, x) -> np.ndarray:
        """log p(x), (n,)."""
        joint = self.component_log_prob(x) + np.log(self.weights)[None]
        return np.logaddexp.reduce(joint, axis=1)

    def class_posterior(self, x) -> np.ndarray:
        """p(k | x), (n, K)."""
        joint = self.component_log_prob(x) + np.log(self.weights)[None]
        return np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))

    def component_scores(self, x) -> np.ndarray:
        """grad log N(x; m_k, Sigma_k) = -Sigma_k^{-1} (x - m_k), (n, K, D)."""
        x = self._check_x(x)
        y = self._whitened(x) / self.eigvals[:, None, :]
        return -np.matmul(y, np.swapaxes(self.eigvecs, 1, 2)).transpose(1, 0, 2)

    def scores(self, x, labels) -> tuple[np.ndarray, np.ndarray]:
        """(grad log p(x | c), grad log p(x)) for class labels c, each (n, D)."""
        x = self._check_x(x)
        labels = self.check_labels(labels, x.shape[0])
        y = self._whitened(x)  # shared by the densities and the scores
        maha = np.sum(y**2 / self.eigvals[:, None, :], axis=2).T
        joint = -0.5 * (maha + np.sum(np.log(self.eigvals), axis=1)[None]) + np.log(self.weights)[None]
        posterior = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))  # p(k | x), (n, K)
        per_component = -np.matmul(y / self.eigvals[:, None, :], np.swapaxes(self.eigvecs, 1, 2))  # (K, n, D)
        s_cond = per_component[labels, np.arange(x.shape[0])]
        s_uncond = np.einsum("nk,knd->nd", posterior, per_component)
        return s_cond, s_uncond

    def check_labels(self, labels, n: int) -> np.ndarray:
        labels = check_array("labels", labels, ndim=1)
        if labels.shape[0] != n or not np.issubdtype(labels.dtype, np.integer):
            raise fail("labels", labels, f"{n} integer class labels")
        if labels.min() < 0 or labels.max() >= self.n_components:
            raise fail("labels", labels, f"class labels in [0, {self.n_components - 1}]")
        return labels

    def sample(self, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """n draws and their class labels: x (n, D), labels (n,)."""
        n = check_int("n", n, 1)
        labels = rng.choice(self.n_components, size=n, p=self.weights)
        z = rng.standard_normal((n, self.dim)) * np.sqrt(self.eigvals[labels])
        return self.means[labels] + np.einsum("ndj,nj->nd", self.eigvecs[labels], z), labels

    def project(self, basis) -> GaussianMixture:
        """The mixture of ``B^T x`` for an orthonormal basis B (D, d): means B^T m_k, covariances B^T Sigma_k B."""
        basis = check_array("basis", basis, ndim=2, dtype=float)
        if basis.shape[0] != self.dim or basis.shape[1] > self.dim:
            raise fail("basis", basis, f"a ({self.dim}, d) matrix with d <= {self.dim}")
        if not np.allclose(basis.T @ basis, np.eye(basis.shape[1]), atol=1e-8):
            raise fail("basis", basis, "orthonormal columns")
        covariances = np.einsum("di,kde,ej->kij", basis, self.covariances, basis)
        return GaussianMixture(self.weights, self.means @ basis, 0.5 * (covariances + np.swapaxes(covariances, 1, 2)))


def kl_to_equilibrium(mixture: GaussianMixture, kappa: float, n: int, rng) -> float:
    """Monte Carlo KL(p || N(0, kappa^2 I)) with the exact log p (the reference for S_NN)."""
    x, _ = mixture.sample(n, rng)
    log_eq = -0.5 * (np.sum(x**2, axis=1) / kappa**2 + mixture.dim * (LOG_2PI + 2 * np.log(kappa)))
    return float(np.mean(mixture.log_prob(x) - log_eq))


def mutual_information(mixture: GaussianMixture, n: int, rng) -> float:
    """Monte Carlo I(X; C) = E[log p(x | c) - log p(x)] with exact densities (the reference for I)."""
    x, labels = mixture.sample(n, rng)
    log_cond = mixture.component_log_prob(x)[np.arange(n), labels]
    return float(np.mean(log_cond - mixture.log_prob(x)))


def manifold_mixture(
    rng, n_classes: int = 10, dim: int = 64, manifold_dim: int = 2, radius: float = 8.0, detail_var: float = 1e-3
) -> tuple[GaussianMixture, np.ndarray]:
    """A K-class mixture on a low-dimensional "manifold" plus fine "detail" directions.

    In a random rotation of R^dim, the first ``manifold_dim`` axes carry the semantic content: K
    unit-variance components with means on a circle of ``radius`` (randomly phased); the other
    ``dim - manifold_dim`` axes are detail with variance ``detail_var``, the same for every class.
    Returns the mixture and the orthonormal manifold basis (dim, manifold_dim): the "low-pass" view.
    """
    n_classes = check_int("n_classes", n_classes, 2)
    dim = check_int("dim", dim, 2)
    manifold_dim = check_int("manifold_dim", manifold_dim, 2, dim)
    radius, detail_var = check_positive("radius", radius), check_positive("detail_var", detail_var)
    rotation, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    angles = 2 * np.pi * (np.arange(n_classes) / n_classes + rng.uniform())
    coords = np.zeros((n_classes, dim))
    coords[:, 0], coords[:, 1] = radius * np.cos(angles), radius * np.sin(angles)
    variances = np.r_[np.ones(manifold_dim), np.full(dim - manifold_dim, detail_var)]
    covariances = np.broadcast_to(rotation @ np.diag(variances) @ rotation.T, (n_classes, dim, dim))
    weights = np.full(n_classes, 1.0 / n_classes)
    return GaussianMixture(weights, coords @ rotation.T, 0.5 * (covariances + np.swapaxes(covariances, 1, 2))), (
        rotation[:, :manifold_dim]
    )
