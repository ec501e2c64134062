"""Link-prediction and regression metrics: ROC-AUC, OGB-style Hits@K, R^2, and the official
log1p + min-max normalisation of count heuristics used as regression targets."""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_int, fail
from sklearn.metrics import r2_score, roc_auc_score


def roc_auc(pos_scores, neg_scores) -> float:
    """Probability that a positive outscores a negative (ties count 1/2), by scikit-learn's ``roc_auc_score``."""
    pos = check_array("pos_scores", pos_scores, ndim=1)
    neg = check_array("neg_scores", neg_scores, ndim=1)
    labels = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    return float(roc_auc_score(labels, np.concatenate([pos, neg])))


def hits_at_k(pos_scores, neg_scores, k: int) -> float:
    """OGB Hits@K: the fraction of positives scored strictly above the K-th highest negative (1 if fewer
    than K negatives)."""
    k = check_int("k", k, 1)
    pos = check_array("pos_scores", pos_scores, ndim=1)
    neg = check_array("neg_scores", neg_scores, ndim=1)
    if len(neg) < k:
        return 1.0
    kth = np.sort(neg)[-k]
    return float((pos > kth).mean())


def r2(y_true, y_pred) -> float:
    """Coefficient of determination 1 - SS_res / SS_tot by scikit-learn's ``r2_score`` (constant targets:
    1 if the predictions are exact, else 0)."""
    t = check_array("y_true", y_true, ndim=1)
    p = check_array("y_pred", y_pred, ndim=1)
    if len(t) != len(p):
        raise fail("y_pred", p, f"as many predictions as targets ({len(t)})")
    return float(r2_score(t, p))


def normalize_log_minmax(scores, upper_percentile: float = 99.99) -> np.ndarray:
    """log1p, then min-max to [0, 1] with the maximum taken at ``upper_percentile`` and clipped
    (official heuristics.py, for the skewed CN/AA/RA targets)."""
    s = np.log1p(check_array("scores", scores, ndim=1).astype(np.float64))
    lo, hi = s.min(), np.percentile(s, upper_percentile)
    if hi - lo < 1e-8:
        raise fail("scores", scores, "scores that are not all equal")
    return np.clip((s - lo) / (hi - lo), 0.0, 1.0)
