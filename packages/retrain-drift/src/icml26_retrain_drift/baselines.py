"""What the paper compares against: the earlier upper bounds on one generation's divergence.

* the classical Girsanov chi-square bound with the worst case (sup-norm) energy, rigorous but loose:
  ``chi2(p_hat || q) <= exp(2 int_0^T sup_x |eta(x, t)|^2 dt) - 1`` (Novikov; g^2 = 2);
* the bound of prior recursive-training analyses in terms of the *learned-path* energy
  ``eps2_hat = int E_{p_hat_t} |eta|^2 dt`` (leading order ``2 eps2_hat``), which, unlike the paper's
  ideal-path energy, is not the training objective.

Pure synthetic retraining (alpha = 0), the other comparator, is ``method.retrain`` with ``alpha=0``.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, fail

from .method import GIRSANOV_CONSTANT, check_times, girsanov_upper


def sup_norm_bound(eta, t) -> float:
    """exp(2 int_0^T max_x eta(x, t)^2 dt) - 1 for a score error ``eta`` (K+1, n) on the time grid ``t``."""
    eta = check_array("eta", eta, ndim=2, dtype=float)
    t = check_times(t)
    if len(eta) != len(t):
        raise fail("eta", eta, f"one row per time ({len(t)})")
    return float(np.expm1(GIRSANOV_CONSTANT * np.trapezoid((eta**2).max(axis=1), t)))


def learned_path_bound(eps2_hat) -> np.ndarray:
    """Leading-order bound of earlier analyses from the learned-path energy: 2 * eps2_hat (same Girsanov
    constant as the paper's ideal-path bound, other path)."""
    return girsanov_upper(eps2_hat)
