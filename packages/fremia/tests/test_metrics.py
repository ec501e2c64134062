"""Attack metrics against scikit-learn and brute-force threshold sweeps."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_fremia import attack_success_rate, auc, evaluate, membership_advantage, tpr_at_fpr
from sklearn.metrics import roc_auc_score

scores = st.lists(st.integers(0, 20).map(float), min_size=1, max_size=40)  # small integers: many ties


def _brute(m, h):
    """(TPR, FPR) of "member iff score <= thr" over every threshold, including one below all scores."""
    thresholds = np.concatenate([[-np.inf], np.unique(np.concatenate([m, h]))])
    return np.array([(m <= t).mean() for t in thresholds]), np.array([(h <= t).mean() for t in thresholds])


@settings(max_examples=50, deadline=None)
@given(scores, scores)
def test_auc_matches_sklearn(m, h):
    labels = np.r_[np.ones(len(m)), np.zeros(len(h))]
    if len(set(labels)) == 2:
        assert auc(m, h) == pytest.approx(roc_auc_score(labels, -np.r_[m, h]))


@settings(max_examples=50, deadline=None)
@given(scores, scores)
def test_threshold_metrics_match_brute_force(m, h):
    m, h = np.array(m), np.array(h)
    tpr, fpr = _brute(m, h)
    assert tpr_at_fpr(m, h, 0.01) == pytest.approx(tpr[fpr < 0.01].max())
    assert membership_advantage(m, h) == pytest.approx((tpr - fpr).max())
    assert attack_success_rate(m, h) == pytest.approx(((tpr * len(m) + (1 - fpr) * len(h)) / (len(m) + len(h))).max())


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=30), st.lists(st.floats(-5, 5), min_size=2, max_size=30))
def test_balanced_sets_give_asr_equal_to_half_plus_half_advantage(m, h):
    n = min(len(m), len(h))
    m, h = np.array(m[:n]), np.array(h[:n])
    assert attack_success_rate(m, h) == pytest.approx(0.5 + 0.5 * membership_advantage(m, h))


def test_limits():
    perfect = evaluate(np.arange(10.0), np.arange(10.0) + 100)
    assert perfect == {"auc": 1.0, "tpr_at_1fpr": 1.0, "asr": 1.0, "advantage": 1.0}
    assert auc(np.ones(5), np.ones(7)) == 0.5 and membership_advantage(np.ones(5), np.ones(7)) == 0.0
    reversed_ = evaluate(np.arange(10.0) + 100, np.arange(10.0))
    assert reversed_["auc"] == 0.0 and reversed_["tpr_at_1fpr"] == 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: auc([], [1.0]), "member_scores="),
        (lambda: auc([1.0], []), "holdout_scores="),
        (lambda: auc([np.nan], [1.0]), "member_scores="),
        (lambda: evaluate([[1.0]], [1.0]), "member_scores="),
        (lambda: tpr_at_fpr([1.0], [2.0], fpr=0.0), "fpr=0.0"),
        (lambda: tpr_at_fpr([1.0], [2.0], fpr=1.5), "fpr=1.5"),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        call()
