"""Attack metrics on member / hold-out scores, where a low score means "member" (the paper's convention).

AUC, TPR at 1% FPR, attack success rate (ASR, best-threshold accuracy) and membership advantage
(best-threshold TPR - FPR, Yeom et al. 2018; the quantity the paper's theory shows the high-frequency
deficiency reduces).
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_open_interval
from scipy.stats import rankdata

FPR = 0.01  # the paper's low-FPR operating point


def _scores(member_scores, holdout_scores) -> tuple[np.ndarray, np.ndarray]:
    m = check_array("member_scores", member_scores, ndim=1).astype(float)
    h = check_array("holdout_scores", holdout_scores, ndim=1).astype(float)
    return m, h


def _roc(m: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TPR and FPR of "member iff score <= threshold" at every distinct threshold (plus the empty rule)."""
    thresholds = np.unique(np.concatenate([m, h]))
    tpr = np.searchsorted(np.sort(m), thresholds, side="right") / len(m)
    fpr = np.searchsorted(np.sort(h), thresholds, side="right") / len(h)
    return np.concatenate([[0.0], tpr]), np.concatenate([[0.0], fpr])


def auc(member_scores, holdout_scores) -> float:
    """P(hold-out score > member score) + 1/2 P(tie): the area under the ROC curve (Mann-Whitney U)."""
    m, h = _scores(member_scores, holdout_scores)
    ranks = rankdata(np.concatenate([m, h]))  # average ranks: a tie counts 1/2
    u = ranks[len(m) :].sum() - len(h) * (len(h) + 1) / 2  # hold-outs ranked above members
    return float(u / (len(m) * len(h)))


def tpr_at_fpr(member_scores, holdout_scores, fpr: float = FPR) -> float:
    """The largest TPR among thresholds whose FPR is strictly below ``fpr`` (as the official evaluation)."""
    check_open_interval("fpr", fpr, 0.0, 1.0)
    tpr_curve, fpr_curve = _roc(*_scores(member_scores, holdout_scores))
    return float(tpr_curve[fpr_curve < fpr].max())


def membership_advantage(member_scores, holdout_scores) -> float:
    """``max_threshold (TPR - FPR)``: the best attacker's advantage over guessing, in [0, 1]."""
    tpr_curve, fpr_curve = _roc(*_scores(member_scores, holdout_scores))
    return float((tpr_curve - fpr_curve).max())


def attack_success_rate(member_scores, holdout_scores) -> float:
    """Best-threshold accuracy ``max (TP + TN) / N`` (the official code sweeps 2000 thresholds; we take
    every distinct score, the exact maximum)."""
    m, h = _scores(member_scores, holdout_scores)
    tpr_curve, fpr_curve = _roc(m, h)
    correct = tpr_curve * len(m) + (1 - fpr_curve) * len(h)
    return float(correct.max() / (len(m) + len(h)))


def evaluate(member_scores, holdout_scores) -> dict[str, float]:
    """All four metrics: ``{"auc", "tpr_at_1fpr", "asr", "advantage"}``."""
    return {
        "auc": auc(member_scores, holdout_scores),
        "tpr_at_1fpr": tpr_at_fpr(member_scores, holdout_scores),
        "asr": attack_success_rate(member_scores, holdout_scores),
        "advantage": membership_advantage(member_scores, holdout_scores),
    }
