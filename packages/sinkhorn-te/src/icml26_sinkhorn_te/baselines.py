"""What the paper compares against: the AIPW average-treatment-effect test, a doubly robust kernel (MMD)
treatment-effect test with a Gaussian kernel, and the non-debiased IPW plug-in of the STE."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from icml26_shared import check_open_interval, check_positive
from scipy.stats import chi2

from .nuisances import check_data, cross_fit_propensity, cross_fit_regression, stratified_folds
from .sinkhorn import sinkhorn_divergence, squared_distances
from .treatment_effect import TestResult, cross_statistics, ipw_counterfactual_laws, max_z_test


def ate_test(
    Y: np.ndarray, A: np.ndarray, X: np.ndarray, alpha: float = 0.05, n_folds: int = 2, seed: int = 0
) -> TestResult:
    """AIPW estimate of E[Y(1) - Y(0)] (p-dim) with cross-fitted nuisances and its Wald chi^2_p test.

    IF_i = mu_1(X_i) - mu_0(X_i) + A_i/pi(X_i) (Y_i - mu_1(X_i)) - (1-A_i)/(1-pi(X_i)) (Y_i - mu_0(X_i)).
    """
    alpha = check_open_interval("alpha", alpha, 0.0, 1.0)
    Y, A, X = check_data(Y, A, X)
    folds = stratified_folds(A, n_folds, seed)
    pi = cross_fit_propensity(X, A, folds)
    mu1 = cross_fit_regression(X, A, Y, 1, folds)
    mu0 = cross_fit_regression(X, A, Y, 0, folds)
    influence = mu1 - mu0 + (A / pi)[:, None] * (Y - mu1) - ((1 - A) / (1 - pi))[:, None] * (Y - mu0)
    tau = influence.mean(axis=0)
    cov = np.atleast_2d(np.cov(influence, rowvar=False)) / len(A)
    wald = float(tau @ np.linalg.solve(cov, tau))
    p_value = float(chi2.sf(wald, df=len(tau)))
    return TestResult(statistic=wald, p_value=p_value, reject=p_value <= alpha, z=tau / np.sqrt(np.diag(cov)))


def gaussian_kernel(reference: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """k(z, w) = exp(-||z - w||^2 / median), the median of squared distances among ``reference`` (m, p)."""
    distances = squared_distances(reference, reference)
    bandwidth = float(np.median(distances[distances > 0]))
    return lambda z, w: np.exp(-squared_distances(z, w) / bandwidth)


def mmd_test(Y: np.ndarray, A: np.ndarray, X: np.ndarray, alpha: float = 0.05, seed: int = 0) -> TestResult:
    """Doubly robust cross kernel treatment-effect test (DR-xKTE style) with a median-bandwidth Gaussian kernel."""
    alpha = check_open_interval("alpha", alpha, 0.0, 1.0)
    return max_z_test(cross_statistics(Y, A, X, [gaussian_kernel], seed), alpha, seed)


def plugin_ste(Y: np.ndarray, A: np.ndarray, X: np.ndarray, eps: float, n_folds: int = 2, seed: int = 0) -> float:
    """The non-debiased plug-in S_eps(P_hat_1, P_hat_0) on the cross-fitted IPW counterfactual laws."""
    eps = check_positive("eps", eps)
    laws = ipw_counterfactual_laws(Y, A, X, n_folds, seed)
    return sinkhorn_divergence(laws.y1, laws.y0, eps, laws.w1, laws.w0).value
