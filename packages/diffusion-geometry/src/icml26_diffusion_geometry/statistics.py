"""The statistics of the ID/OOD comparison: rank correlation, AUROC and a paired bootstrap."""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_int


def spearman(x, y) -> float:
    """Spearman's rank correlation of two samples of equal length (ties share their mean rank)."""
    from scipy.stats import spearmanr

    x, y = check_array("x", x, ndim=1), check_array("y", y, ndim=1)
    if x.size != y.size or x.size < 3:
        raise ValueError(f"x, y: expected the same length >= 3, got {x.size} and {y.size}")
    return float(spearmanr(x, y).statistic)


def auroc(ood_scores, id_scores) -> float:
    """Area under the ROC curve for "higher score = OOD" (ties count one half): ``roc_auc_score``."""
    ood = check_array("ood_scores", ood_scores, ndim=1).astype(float)
    ind = check_array("id_scores", id_scores, ndim=1).astype(float)
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(np.r_[np.ones(ood.size), np.zeros(ind.size)], np.r_[ood, ind]))  # scikit-learn


def bootstrap_p_value(statistic, n: int, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    """One-sided paired bootstrap: ``statistic(idx)`` on ``resamples`` index draws with replacement from
    range(n); returns (fraction of draws <= 0, the 2.5% quantile of the draws)."""
    n, resamples = check_int("n", n, 2), check_int("resamples", resamples, 1)
    draws = np.array([statistic(rng.integers(0, n, size=n)) for _ in range(resamples)])
    return float((draws <= 0).mean()), float(np.quantile(draws, 0.025))
