"""Random, FastV-style and diversity selection: budgets, a brute-force max-min check, FastV's attention source."""

import itertools

import pytest
import torch
from icml26_v2v_ccm import diversity_select, fastv_scores, random_select
from icml26_v2v_ccm.model import N_QUESTION_TOKENS


def test_random_select_keeps_k_and_is_reproducible():
    a = random_select((4, 2, 16), 0.25, torch.Generator().manual_seed(3))
    b = random_select((4, 2, 16), 0.25, torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and (a.sum(-1) == 4).all()


def test_random_select_covers_every_token_over_draws():
    generator = torch.Generator().manual_seed(0)
    counts = sum(random_select((1, 16), 0.25, generator).float() for _ in range(400))
    assert counts.min() > 50 and counts.max() < 150  # expected 100 each


def test_fastv_reads_the_answer_tokens_attention_in_layer_k():
    b, h, a, n = 2, 4, 3, 5
    L = N_QUESTION_TOKENS + a * n
    attentions = [torch.rand(b, h, L, L) for _ in range(2)]
    scores = fastv_scores(attentions, 1, a)
    assert scores.shape == (b, a, n)
    assert torch.allclose(scores[1, 2, 4], attentions[1][1, :, 0, N_QUESTION_TOKENS + 2 * n + 4].mean())
    with pytest.raises(ValueError, match="layer=2"):
        fastv_scores(attentions, 2, a)


def _min_distance(unit, subset):
    return min(1 - float(unit[i] @ unit[j]) for i, j in itertools.combinations(subset, 2))


def test_diversity_select_is_a_good_max_min_subset():
    torch.manual_seed(0)
    features = torch.randn(10, 6)
    mask = diversity_select(features, 0.4)  # 4 of 10
    assert mask.sum() == 4 and mask[features.norm(dim=-1).argmax()]
    unit = torch.nn.functional.normalize(features, dim=-1)
    best = max(_min_distance(unit, s) for s in itertools.combinations(range(10), 4))
    # greedy farthest-point is a 2-approximation of the max-min dispersion optimum
    assert _min_distance(unit, mask.nonzero().flatten().tolist()) >= best / 2


def test_diversity_select_picks_one_per_cluster():
    centres = torch.eye(4) * 10
    features = torch.cat([centres + 0.01 * torch.randn(4, 4) for _ in range(3)])  # 3 copies of 4 clusters
    kept = diversity_select(features, 4 / 12).nonzero().flatten() % 4
    assert sorted(kept.tolist()) == [0, 1, 2, 3]


def test_diversity_select_rejects_non_finite_features():
    with pytest.raises(ValueError, match="features="):
        diversity_select(torch.tensor([[float("nan"), 1.0]]), 0.5)
