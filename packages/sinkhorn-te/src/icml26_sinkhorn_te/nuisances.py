"""Observational data checks and the nuisance estimators (scikit-learn) shared by the method and baselines.

* propensity pi(x) = P(A = 1 | X = x): logistic regression, cross-fitted over folds;
* outcome regressions m_a(x) = E[h(Y) | A = a, X = x] and conditional mean embeddings: kernel ridge
  regression on X with a Gaussian kernel of median-heuristic bandwidth (the smoother weights are
  returned, so one fit serves scalar targets, vector targets and embeddings alike).
"""

from __future__ import annotations

import warnings

import numpy as np
from icml26_shared import check_array, check_int, fail
from scipy.linalg import solve
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel
from sklearn.model_selection import StratifiedKFold

PROPENSITY_BOUNDS = (0.01, 0.99)  # [INF] trimming of estimated propensities (with a warning)
RIDGE_ALPHA = 1.0  # [INF] kernel ridge penalty for m_a and the conditional mean embeddings


def check_data(Y: np.ndarray, A: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate observational data (Y outcomes (n, p) or (n,), A binary (n,), X covariates (n, d) or (n,)).

    Returns Y and X as 2-D float arrays and A as an int array with both arms present.
    """
    Y = check_array("Y", Y, ndim=(1, 2), dtype=float)
    X = check_array("X", X, ndim=(1, 2), dtype=float)
    A = check_array("A", A, ndim=1)
    if not np.isin(A, (0, 1)).all():
        raise fail("A", A, "a binary treatment indicator with values in {0, 1}")
    A = A.astype(int)
    if len(Y) != len(A) or len(X) != len(A):
        raise fail("Y", Y, f"Y, A and X of the same length; got {len(Y)}, {len(A)}, {len(X)}")
    if A.min() == A.max():
        raise fail("A", A, "both arms present (some A = 0 and some A = 1)")
    return Y.reshape(len(Y), -1), A, X.reshape(len(X), -1)


def stratified_folds(A: np.ndarray, n_folds: int, seed: int) -> list[np.ndarray]:
    """Indices of ``n_folds`` folds, stratified by arm so every fold holds treated and control units."""
    n_folds = check_int("n_folds", n_folds, 2, int(min(A.sum(), len(A) - A.sum())))
    seed = check_int("seed", seed, 0)
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    return [test for _train, test in splitter.split(np.zeros(len(A)), A)]


def fit_propensity(X_train: np.ndarray, A_train: np.ndarray, X_eval: np.ndarray) -> np.ndarray:
    """Logistic-regression propensities at X_eval, trimmed to PROPENSITY_BOUNDS with a RuntimeWarning."""
    model = LogisticRegression().fit(X_train, A_train)
    pi = model.predict_proba(X_eval)[:, 1]
    low, high = PROPENSITY_BOUNDS
    if ((pi < low) | (pi > high)).any():
        warnings.warn(
            f"{int(((pi < low) | (pi > high)).sum())} estimated propensities outside {PROPENSITY_BOUNDS} "
            "(positivity violation) were trimmed to the bounds",
            RuntimeWarning,
            stacklevel=2,
        )
    return np.clip(pi, low, high)


def cross_fit_propensity(X: np.ndarray, A: np.ndarray, folds: list[np.ndarray]) -> np.ndarray:
    """pi_hat(X_i) for every unit, fitted on the folds that do not contain i."""
    pi = np.empty(len(A))
    for test in folds:
        train = np.setdiff1d(np.arange(len(A)), test)
        pi[test] = fit_propensity(X[train], A[train], X[test])
    return pi


def ridge_weights(X_train: np.ndarray, X_eval: np.ndarray) -> np.ndarray:
    """Kernel ridge smoother weights W = k(X_eval, X_train) (K + RIDGE_ALPHA I)^{-1} (k, n_train).

    Predictions are W @ targets for any targets (the fit of sklearn's KernelRidge with this kernel),
    and row i is the conditional law of the outcome at X_eval[i] as a signed measure on the training
    outcomes: the conditional mean embedding estimate of Muandet et al. (2021).
    """
    distances = euclidean_distances(X_train, squared=True)
    gamma = 1.0 / max(float(np.median(distances[distances > 0])), 1e-12)  # median heuristic
    gram = rbf_kernel(X_train, gamma=gamma) + RIDGE_ALPHA * np.eye(len(X_train))
    return solve(gram, rbf_kernel(X_train, X_eval, gamma=gamma), assume_a="pos").T


def cross_fit_regression(
    X: np.ndarray, A: np.ndarray, target: np.ndarray, arm: int, folds: list[np.ndarray]
) -> np.ndarray:
    """m_arm(X_i) = E[target | A = arm, X_i] for every unit, fitted on arm units outside i's fold.

    ``target`` (n,) or (n, q) is read only at the units with A = arm.
    """
    out = np.empty((len(A), *target.shape[1:]))
    for test in folds:
        train = np.setdiff1d(np.flatnonzero(A == arm), test)
        out[test] = ridge_weights(X[train], X[test]) @ target[train]
    return out
