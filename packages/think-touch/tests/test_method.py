"""The touch step: selective AdamW with state only for touched groups, groups and their checks."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_think_touch import (
    Cyclic,
    FullFineTuning,
    RandomK,
    ResidualMLP,
    ThinkTouch,
    check_groups,
    groups_by_module,
    make_strategy,
    optimizer_state_bytes,
)
from torch.nn import functional as F


def _setup(seed=0, width=8, depth=2):
    torch.manual_seed(seed)
    model = ResidualMLP(5, 3, width, depth)
    X, y = torch.randn(32, 5), torch.randint(0, 3, (32,))
    return model, X, y


def test_groups_by_module_gives_one_group_per_linear():
    names, groups = groups_by_module(ResidualMLP(5, 3, 8, 2))
    assert names == ["embed", "blocks.0.0", "blocks.0.2", "blocks.1.0", "blocks.1.2", "head"]
    assert all(len(g) == 2 for g in groups)  # weight and bias


def test_full_selection_equals_torch_adamw():
    model, X, y = _setup()
    reference = ResidualMLP(5, 3, 8, 2)
    reference.load_state_dict(model.state_dict())
    _, groups = groups_by_module(model)
    tt = ThinkTouch(groups, FullFineTuning(len(groups)), lr=1e-2)
    adamw = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(5):
        tt.step(lambda: F.cross_entropy(model(X), y))
        loss = F.cross_entropy(reference(X), y)
        adamw.zero_grad()
        loss.backward()
        adamw.step()
    for a, b in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6)


@given(st.integers(0, 1000), st.integers(1, 5), st.integers(1, 3))
def test_only_touched_groups_change_and_hold_state(seed, k, switch_every):
    model, X, y = _setup(seed)
    _, groups = groups_by_module(model)
    tt = ThinkTouch(groups, RandomK(len(groups), k), lr=1e-2, switch_every=switch_every, seed=seed)
    for _ in range(4):
        before = [[p.detach().clone() for p in g] for g in groups]
        tt.step(lambda: F.cross_entropy(model(X), y))
        moved = [
            any(not torch.equal(p, q) for p, q in zip(group, before[index], strict=True))
            for index, group in enumerate(groups)
        ]
        assert len(tt.selected) == k and any(moved[g] for g in tt.selected)
        for index, group in enumerate(groups):
            if index not in tt.selected:  # untouched groups never move and hold no AdamW state
                assert not moved[index] and all(p not in tt.optimizer.state for p in group)
        touched = sum(p.numel() for g in tt.selected for p in groups[g])
        assert optimizer_state_bytes(tt.optimizer) == 2 * 4 * touched + 4 * sum(len(groups[g]) for g in tt.selected)


def test_untouched_groups_get_no_gradient():
    model, X, y = _setup()
    _, groups = groups_by_module(model)
    tt = ThinkTouch(groups, Cyclic(len(groups), 1), lr=1e-2)
    tt.touch(np.array([5]))  # the head only: autograd computes no weight gradient below it
    F.cross_entropy(model(X), y).backward()
    assert all(p.grad is None for g in groups[:5] for p in g) and all(p.grad is not None for p in groups[5])


def test_greedy_touches_the_groups_with_largest_gradients():
    model, X, y = _setup()
    _, groups = groups_by_module(model)
    probe = ResidualMLP(5, 3, 8, 2)
    probe.load_state_dict(model.state_dict())
    F.cross_entropy(probe(X), y).backward()
    sq = np.array([sum(float(p.grad.pow(2).sum()) for p in g) for g in groups_by_module(probe)[1]])
    tt = ThinkTouch(groups, make_strategy("greedy", len(groups), 2), lr=1e-2)
    tt.step(lambda: F.cross_entropy(model(X), y))
    assert set(tt.selected) == set(np.argsort(-sq)[:2])


def test_state_bytes_shrink_to_the_selected_share():
    model, X, y = _setup(width=16, depth=3)
    _, groups = groups_by_module(model)
    full = ThinkTouch(groups, FullFineTuning(len(groups)), lr=1e-3)
    full.step(lambda: F.cross_entropy(model(X), y))
    part = ThinkTouch(groups, Cyclic(len(groups), 1), lr=1e-3)
    for _ in range(len(groups)):
        part.step(lambda: F.cross_entropy(model(X), y))
    largest = max(sum(p.numel() for p in g) for g in groups)
    assert part.peak_state_bytes == 8 * largest + 8  # exp_avg, exp_avg_sq (float32) + two step counters
    assert part.peak_state_bytes < full.peak_state_bytes / 3


def test_rejects_empty_overlapping_and_missing_groups():
    model = ResidualMLP(5, 3, 8, 1)
    params = list(model.parameters())
    with pytest.raises(ValueError, match="groups="):
        check_groups([params[:2], []])
    with pytest.raises(ValueError, match="groups="):
        check_groups([])
    with pytest.raises(ValueError, match="groups="):
        check_groups([params[:2], params[1:3]])
    with pytest.raises(ValueError, match="groups="):
        check_groups([params[:2]], model)


def test_rejects_bad_switch_every_lr_and_strategy():
    model = ResidualMLP(5, 3, 8, 1)
    _, groups = groups_by_module(model)
    with pytest.raises(ValueError, match="switch_every="):
        ThinkTouch(groups, RandomK(4, 1), switch_every=0)
    with pytest.raises(ValueError, match="lr="):
        ThinkTouch(groups, RandomK(4, 1), lr=0.0)
    with pytest.raises(ValueError, match="strategy="):
        ThinkTouch(groups, RandomK(3, 1))


def test_rejects_non_finite_loss():
    model, X, y = _setup()
    _, groups = groups_by_module(model)
    tt = ThinkTouch(groups, RandomK(len(groups), 2))
    with pytest.raises(ValueError, match="loss="):
        tt.step(lambda: F.cross_entropy(model(X), y) * float("inf"))


def test_model_rejects_batch_of_wrong_shape():
    with pytest.raises(ValueError, match="x.shape="):
        ResidualMLP(5, 3, 8, 1)(torch.randn(4, 6))
