"""Attack metrics on member / hold-out scores, where a low score means "member" (the paper's convention).

AUC, TPR at 1% FPR, attack success rate (ASR, best-threshold accuracy) and membership advantage
(best-threshold TPR - FPR, Yeom et al. 2018; the quantity the paper's theory shows the high-frequency
deficiency reduces). All four come from scikit-learn's ROC (``roc_curve(drop_intermediate=False)``, every
distinct threshold) and ``roc_auc_score`` on ``-score`` with members as the positive class.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_open_interval
from sklearn.metrics import roc_auc_score, roc_curve

FPR = 0.01  # the paper's low-FPR operating point


def _labelled(member_scores, holdout_scores) -> tuple[np.ndarray, np.ndarray]:
    """``(y_true, y_score)`` for scikit-learn: members are the positives, ``-score`` ranks them first."""
    m = check_array("member_scores", member_scores, ndim=1).astype(float)
    h = check_array("holdout_scores", holdout_scores, ndim=1).astype(float)
    return np.r_[np.ones(len(m)), np.zeros(len(h))], -np.r_[m, h]


def _roc(member_scores, holdout_scores) -> tuple[np.ndarray, np.ndarray]:
    """TPR and FPR of "member iff score <= threshold" at every distinct threshold (plus the empty rule)."""
    fpr, tpr, _ = roc_curve(*_labelled(member_scores, holdout_scores), drop_intermediate=False)
    return tpr, fpr


def auc(member_scores, holdout_scores) -> float:
    """P(hold-out score > member score) + 1/2 P(tie): the area under the ROC curve (Mann-Whitney U)."""
    return float(roc_auc_score(*_labelled(member_scores, holdout_scores)))


def tpr_at_fpr(member_scores, holdout_scores, fpr: float = FPR) -> float:
    """The largest TPR among thresholds whose FPR is strictly below ``fpr`` (as the official evaluation)."""
    check_open_interval("fpr", fpr, 0.0, 1.0)
    tpr_curve, fpr_curve = _roc(member_scores, holdout_scores)
    return float(tpr_curve[fpr_curve < fpr].max())


def membership_advantage(member_scores, holdout_scores) -> float:
    """``max_threshold (TPR - FPR)``: the best attacker's advantage over guessing, in [0, 1]."""
    tpr_curve, fpr_curve = _roc(member_scores, holdout_scores)
    return float((tpr_curve - fpr_curve).max())


def attack_success_rate(member_scores, holdout_scores) -> float:
    """Best-threshold accuracy ``max (TP + TN) / N`` (the official code sweeps 2000 thresholds; we take
    every distinct score, the exact maximum)."""
    n_members, n_holdout = len(np.ravel(member_scores)), len(np.ravel(holdout_scores))
    tpr_curve, fpr_curve = _roc(member_scores, holdout_scores)
    correct = tpr_curve * n_members + (1 - fpr_curve) * n_holdout
    return float(correct.max() / (n_members + n_holdout))


def evaluate(member_scores, holdout_scores) -> dict[str, float]:
    """All four metrics: ``{"auc", "tpr_at_1fpr", "asr", "advantage"}``."""
    return {
        "auc": auc(member_scores, holdout_scores),
        "tpr_at_1fpr": tpr_at_fpr(member_scores, holdout_scores),
        "asr": attack_success_rate(member_scores, holdout_scores),
        "advantage": membership_advantage(member_scores, holdout_scores),
    }
