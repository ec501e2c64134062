"""Baselines: full fine-tuning, LoRA, random-k, cyclic, and the coverage-violating rule."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_think_touch import Cyclic, Excluding, FullFineTuning, LoRALinear, RandomK, ResidualMLP, apply_lora
from torch import nn


@given(st.integers(1, 20), st.data())
def test_cyclic_covers_every_group_within_ceil_G_over_k_rounds(G, data):
    k = data.draw(st.integers(1, G))
    rule = Cyclic(G, k)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(-(-G // k)):
        chosen = rule.choose(rng)
        assert chosen.size == k == len(set(chosen.tolist()))
        seen |= set(chosen.tolist())
    assert seen == set(range(G))


def test_random_k_is_uniform():
    rule, rng = RandomK(5, 2), np.random.default_rng(0)
    counts = np.zeros(5)
    for _ in range(5000):
        counts[rule.choose(rng)] += 1
    assert np.allclose(counts / 5000, 0.4, atol=0.03)


def test_excluding_never_selects_the_excluded_group():
    rule, rng = Excluding(6, 2, never=(0, 3)), np.random.default_rng(0)
    chosen = np.concatenate([rule.choose(rng) for _ in range(200)])
    assert not np.isin(chosen, [0, 3]).any() and set(chosen.tolist()) == {1, 2, 4, 5}


def test_lora_starts_equal_to_the_base_and_trains_only_its_factors():
    torch.manual_seed(0)
    model = ResidualMLP(6, 3, 8, 2)
    x = torch.randn(4, 6)
    before = model(x)
    apply_lora(model, rank=2)
    assert torch.allclose(model(x), before)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(n.endswith((".A", ".B")) for n in trainable)
    assert sum(isinstance(m, LoRALinear) for m in model.modules()) == 6


def test_lora_update_has_rank_at_most_r():
    layer = LoRALinear(nn.Linear(10, 12), rank=3, alpha=6.0)
    with torch.no_grad():
        layer.B.normal_()
    delta = layer.scale * layer.B @ layer.A
    assert torch.linalg.matrix_rank(delta) <= 3


def test_rejects_bad_lora_rank_and_model_without_linear():
    with pytest.raises(ValueError, match="rank="):
        LoRALinear(nn.Linear(4, 4), rank=0, alpha=1.0)
    with pytest.raises(ValueError, match="model="):
        apply_lora(nn.ReLU(), rank=2)


def test_rejects_partial_full_fine_tuning_and_excluding_everything():
    with pytest.raises(ValueError, match="k="):
        FullFineTuning(4, 2)
    with pytest.raises(ValueError, match="never="):
        Excluding(3, 2, never=(0, 1))
    with pytest.raises(ValueError, match="never="):
        Excluding(3, 1, never=(5,))
