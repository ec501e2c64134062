"""Global mean-difference steering at a matched norm, and the random-feature control."""

import pytest
import torch
from icml26_emotion_sae import TopKSAE, global_steering, mean_difference, random_features


def test_mean_difference_and_matched_norm():
    h_e, h_n = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[0.0, 0.0]])
    direction = mean_difference(h_e, h_n)
    torch.testing.assert_close(direction, torch.tensor([2.0, 3.0]))
    h = torch.randn(5, 2)
    delta = global_steering(direction, 0.7)(h) - h
    torch.testing.assert_close(delta.norm(dim=-1), torch.full((5,), 0.7))
    torch.testing.assert_close(delta[0] / delta[0].norm(), direction / direction.norm())


def test_random_features_avoid_the_excluded_ones():
    sae = TopKSAE(4, 16, 2)
    exclude = torch.arange(10)
    for seed in range(5):
        chosen = random_features(sae, 4, exclude, torch.Generator().manual_seed(seed))
        assert len(set(chosen.tolist())) == 4 and min(chosen.tolist()) >= 10


def test_bad_inputs():
    with pytest.raises(ValueError, match="direction="):
        global_steering(torch.zeros(3), 1.0)
    with pytest.raises(ValueError, match="norm=inf"):
        global_steering(torch.ones(3), float("inf"))
    with pytest.raises(ValueError, match="h_neutral="):
        mean_difference(torch.ones(2, 3), torch.ones(0, 3))
    with pytest.raises(ValueError, match="h_neutral="):
        mean_difference(torch.ones(2, 3), torch.ones(2, 4))
    with pytest.raises(ValueError, match="m=7"):
        random_features(TopKSAE(4, 16, 2), 7, torch.arange(10), torch.Generator())
