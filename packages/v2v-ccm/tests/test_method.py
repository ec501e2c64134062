"""CCM: top-k selection, the request messages, the score fusion, bytes; and their bad inputs."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_v2v_ccm import (
    ccm_scores,
    dense_bytes,
    keep_count,
    message_bytes,
    request_bytes,
    scm_coverage,
    scm_message,
    select_tokens,
)


@given(n=st.integers(1, 80), rho=st.floats(1e-3, 1.0), seed=st.integers(0, 1000))
def test_select_tokens_keeps_the_k_best(n, rho, seed):
    scores = torch.randn(3, n, generator=torch.Generator().manual_seed(seed))
    mask = select_tokens(scores, rho)
    k = math.ceil(rho * n - 1e-9)
    assert (mask.sum(-1) == k).all()
    for row, m in zip(scores, mask, strict=True):  # every kept score beats every dropped one (brute force)
        if k < n:
            assert row[m].min() >= row[~m].max()


def test_select_tokens_breaks_ties_by_index():
    """Equal scores keep the lowest token indices (a stable sort, not whatever topk returns)."""
    torch.testing.assert_close(select_tokens(torch.zeros(16), 0.25), torch.arange(16) < 4)
    scores = torch.zeros(2, 40)
    scores[:, 30] = 1.0
    scores[:, 8:20] = 0.5  # a block of 12 equal scores
    expected = torch.zeros(40, dtype=torch.bool)
    expected[[30, 8, 9, 10, 11, 12, 13]] = True  # k = ceil(0.175 * 40) = 7
    torch.testing.assert_close(select_tokens(scores, 0.175), expected.expand(2, 40))


def test_keep_ratio_one_keeps_everything():
    assert select_tokens(torch.randn(2, 16), 1.0).all()
    assert keep_count(0.25, 16) == 4 and keep_count(0.1, 16) == 2 and keep_count(1.0, 7) == 7


@pytest.mark.parametrize("rho", [0.0, -0.25, 1.5])
def test_keep_ratio_outside_0_1_is_rejected(rho):
    with pytest.raises(ValueError, match=r"keep_ratio=.*\(0, 1\]"):
        select_tokens(torch.randn(4), rho)


@pytest.mark.parametrize("rho", [float("nan"), float("inf")])
def test_non_finite_keep_ratio_is_rejected(rho):
    with pytest.raises(ValueError, match=r"keep_ratio=.*finite"):
        select_tokens(torch.randn(4), rho)


def test_keep_ratio_must_be_a_number():
    with pytest.raises(ValueError, match="keep_ratio='half'"):
        keep_count("half", 8)


def test_non_finite_scores_are_rejected():
    with pytest.raises(ValueError, match="scores=.*finite"):
        select_tokens(torch.tensor([0.1, float("nan")]), 0.5)


def test_scm_round_trip_is_within_quantisation():
    c = np.random.default_rng(0).random(64)
    message = scm_message(c)
    assert message.dtype == np.uint8 and message.nbytes == 64
    np.testing.assert_allclose(scm_coverage(message).numpy(), c, atol=0.5 / 255 + 1e-7)


@pytest.mark.parametrize("coverage", [[0.2, 1.5], [-0.1], [np.nan], []])
def test_scm_rejects_coverage_outside_0_1(coverage):
    with pytest.raises(ValueError, match="coverage="):
        scm_message(np.array(coverage))


def test_scm_coverage_needs_a_uint8_message():
    with pytest.raises(ValueError, match="message="):
        scm_coverage(np.array([0.5]))


def test_ccm_scores_rank_uncovered_before_covered_and_relevant_first():
    relevance = torch.tensor([3.0, 1.0, 2.0, 0.0])
    coverage = torch.tensor([1.0, 0.0, 0.0, 0.0])  # token 0 is the most relevant but the ego already sees it
    s = ccm_scores(relevance, coverage)
    assert s.argsort(descending=True).tolist() == [2, 1, 3, 0]
    assert torch.equal(ccm_scores(relevance, coverage, lam=0.0).argsort(), relevance.argsort())  # QSM only


def test_ccm_scores_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="coverage="):
        ccm_scores(torch.zeros(4), torch.zeros(5))


def test_bytes_count_features_indices_and_request():
    assert dense_bytes(64, 32) == 64 * 32 * 2  # float16 features, no indices
    assert message_bytes(16, 64, 32) == 16 * (32 * 2 + 1)  # + one uint8 index per token
    assert message_bytes(16, 1000, 32) == 16 * (32 * 2 + 2)  # uint16 indices beyond 256 tokens
    assert request_bytes(16, 64) == 16 * 2 + 64  # QSM float16 + SCM one byte per patch
    assert message_bytes(0, 64, 32) == 0


def test_message_bytes_rejects_more_tokens_than_exist():
    with pytest.raises(ValueError, match="k=65"):
        message_bytes(65, 64, 32)
