import numpy as np
import pytest
import torch
import torch.nn.functional as F
from icml26_ai_engrams import MLP, collect_statistics, compute_engram, gradient_ascent, random_direction


def test_random_direction_has_the_engrams_norm_per_layer():
    torch.manual_seed(0)
    model = MLP(4, (6,), 3)
    x = torch.rand(20, 4)
    engram = compute_engram(model, collect_statistics(model, x[:7]), collect_statistics(model, x))
    rand = random_direction(engram, torch.Generator().manual_seed(1))
    assert np.allclose(list(rand.norms().values()), list(engram.norms().values()))
    assert not torch.allclose(rand.augmented("layers.0"), engram.augmented("layers.0"))
    assert rand.bias["layers.0"].shape == (6,)


def test_gradient_ascent_raises_the_forget_loss_and_stops():
    torch.manual_seed(0)
    model = MLP(4, (8,), 3)
    x, y = torch.rand(16, 4), torch.randint(0, 3, (16,))
    edited, steps = gradient_ascent(model, x, y, lr=0.1, max_steps=5)
    assert steps == 5
    assert F.cross_entropy(edited(x), y) > F.cross_entropy(model(x), y)
    _, steps = gradient_ascent(model, x, y, stop=lambda m: True)
    assert steps == 0


def test_gradient_ascent_on_a_language_model_counts_only_labelled_positions():
    """LM logits (n, T, V) against labels (n, T) with -100 where nothing counts (the LLM baseline); Adam."""
    from icml26_ai_engrams import TinyLM

    torch.manual_seed(0)
    lm = TinyLM(11, 6, dim=8, heads=2, layers=1)
    ids = torch.randint(0, 11, (4, 6))
    labels = torch.full((4, 6), -100)
    labels[:, 3] = ids[:, 4]

    def loss(m):
        logits = m(ids)
        return F.cross_entropy(logits.reshape(-1, 11), labels.reshape(-1))

    edited, steps = gradient_ascent(lm, ids, labels, lr=1e-2, max_steps=3, optimizer="adam")
    assert steps == 3 and loss(edited) > loss(lm)
    with pytest.raises(ValueError, match="optimizer="):
        gradient_ascent(lm, ids, labels, optimizer="lbfgs")


def test_baselines_reject_bad_inputs():
    model = MLP(4, (8,), 3)
    with pytest.raises(ValueError, match="X_forget="):
        gradient_ascent(model, torch.rand(0, 4), torch.zeros(0, dtype=torch.long))
    with pytest.raises(ValueError, match="lr="):
        gradient_ascent(model, torch.rand(2, 4), torch.zeros(2, dtype=torch.long), lr=0.0)
    x = torch.rand(5, 4)
    engram = compute_engram(model, collect_statistics(model, x[:2]), collect_statistics(model, x))
    with pytest.raises(ValueError, match="generator="):
        random_direction(engram, 3)
