"""Masks, comparison groups, N:M, the block-by-block procedure and its bad inputs."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_autoprune.data import planted_outlier_network
from icml26_autoprune.metric import MAGNITUDE, WANDA, parse_metric
from icml26_autoprune.pruning import apply_masks, dense_statistics, prune_blocks, select_mask
from torch import nn
from torch.nn.utils import prune


@given(st.integers(1, 6), st.integers(2, 12), st.floats(0, 0.99), st.integers(0, 1000))
def test_row_mask_removes_exactly_the_lowest_scores_of_each_row(rows, cols, s, seed):
    score = torch.rand(rows, cols, generator=torch.Generator().manual_seed(seed))
    mask = select_mask(score, s)
    k = int(cols * s)
    assert (~mask).sum(1).tolist() == [k] * rows
    for i in range(rows):  # brute force: every removed score is <= every kept one
        if 0 < k < cols:
            assert score[i][~mask[i]].max() <= score[i][mask[i]].min()


@given(st.integers(1, 6), st.integers(2, 40), st.floats(0, 0.99), st.integers(1, 5), st.integers(0, 1000))
def test_masks_equal_a_stable_sort_also_with_ties(rows, cols, s, levels, seed):
    """The selection gives exactly Wanda's stable sort (ties removed in index order), per row and per layer;
    few score levels make many ties (as |W| dequantised from 16 levels has)."""
    score = torch.randint(0, levels, (rows, cols), generator=torch.Generator().manual_seed(seed)).float() / levels
    k = int(cols * s)
    reference = torch.ones(rows, cols, dtype=torch.bool).scatter_(1, torch.sort(score, stable=True).indices[:, :k], 0)
    assert torch.equal(select_mask(score, s), reference)
    k = int(score.numel() * s)
    flat = torch.ones(rows * cols, dtype=torch.bool).scatter_(
        0, torch.sort(score.flatten(), stable=True).indices[:k], 0
    )
    assert torch.equal(select_mask(score, s, group="layer"), flat.reshape(rows, cols))


def test_layer_mask_removes_the_lowest_of_the_whole_matrix():
    score = torch.arange(12.0).reshape(3, 4).flip(0)
    mask = select_mask(score, 0.5, group="layer")
    assert int((~mask).sum()) == 6 and bool((score[~mask] < 6).all())


def test_n_m_mask_against_brute_force():
    score = torch.rand(3, 8, generator=torch.Generator().manual_seed(3))
    mask = select_mask(score, 0.0, pattern=(2, 4))
    for i, block in itertools.product(range(3), range(2)):
        cols = score[i, 4 * block : 4 * block + 4]
        removed = set(torch.argsort(cols)[:2].tolist())
        assert {j for j in range(4) if not mask[i, 4 * block + j]} == removed


def test_masks_match_torch_prune_semantics():
    layer = nn.Linear(8, 4)
    mask = select_mask(layer.weight.detach().abs(), 0.5)
    reference = nn.Linear(8, 4)
    reference.load_state_dict(layer.state_dict())
    prune.custom_from_mask(reference, "weight", mask)
    apply_masks(nn.Sequential(layer), {"0": mask})
    assert torch.equal(layer.weight, reference.weight)


def test_wanda_row_scores_keep_heavy_input_channels():
    W = torch.ones(2, 4)
    X = torch.tensor([1.0, 10.0, 0.1, 5.0])
    from icml26_autoprune.metric import evaluate_metric

    mask = select_mask(evaluate_metric(WANDA, W, X), 0.5)
    assert mask.tolist() == [[False, True, False, True]] * 2


def test_prune_blocks_sparsity_and_propagation():
    net = planted_outlier_network(seed=0)
    dense = planted_outlier_network(seed=0)
    x = torch.randn(256, 128, generator=torch.Generator().manual_seed(0))
    result = prune_blocks(list(net), x, [0.5, 0.6, 0.7, 0.5, 0.6, 0.7], WANDA)
    assert result.achieved == pytest.approx([0.5, 0.6, 0.7, 0.5, 0.6, 0.7], abs=1 / 128)
    assert result.total_sparsity == pytest.approx(0.6, abs=0.01)
    for index, block in enumerate(net):  # block l's X comes from the pruned blocks 0..l-1 (Wanda's procedure)
        stats = dense_statistics([*list(net)[:index], block], x)[-1]["0"]
        mask = select_mask(stats.X.reshape(1, -1) * dense[index][0].weight.abs(), result.target[index])
        assert torch.equal(mask, result.masks[f"{index}.0"])


def test_dense_statistics_are_copies_that_pruning_leaves_alone():
    net = planted_outlier_network(seed=2)
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(2))
    stats = dense_statistics(list(net), x)
    before = [s.weight.clone() for block in stats for s in block.values()]
    prune_blocks(list(net), x, [0.5] * 6, WANDA)
    assert all(torch.equal(w, s.weight) for w, s in zip(before, [s for b in stats for s in b.values()], strict=True))
    assert float((net[0][0].weight == 0).float().mean()) == 0.5  # the network itself was pruned


def test_magnitude_layer_group_and_n_m_procedure():
    net = planted_outlier_network(seed=1)
    x = torch.randn(64, 128)
    result = prune_blocks(list(net), x, [0.5] * 6, MAGNITUDE, group="layer")
    assert all(abs(a - 0.5) < 1e-9 for a in result.achieved)
    net = planted_outlier_network(seed=1)
    result = prune_blocks(list(net), x, [0.0] * 6, WANDA, pattern=(2, 4))
    assert result.achieved == pytest.approx([0.5] * 6)


BAD = [
    ({"sparsities": [1.0] * 6}, "sparsities=1.0"),
    ({"sparsities": [-0.1] * 6}, "sparsities=-0.1"),
    ({"sparsities": [0.5] * 5}, "sparsities=5"),
    ({"pattern": (4, 4)}, "N=4"),
    ({"pattern": (0, 4)}, "N=0"),
    ({"pattern": (2, 3)}, "in_features=128"),
    ({"group": "column"}, "group='column'"),
    ({"inputs": torch.empty(0, 128)}, "inputs="),
    ({"inputs": torch.full((4, 128), float("nan"))}, "inputs="),
    ({"block_kwargs": [{}] * 5}, "block_kwargs=5"),
]


@pytest.mark.parametrize(("change", "named"), BAD)
def test_bad_inputs_name_the_argument(change, named):
    net = planted_outlier_network(seed=0)
    kwargs = {"blocks": list(net), "inputs": torch.randn(8, 128), "sparsities": [0.5] * 6, "metric": WANDA, **change}
    with pytest.raises(ValueError, match=f"^{named}" if "=" in named else named):
        prune_blocks(**kwargs)


@pytest.mark.parametrize("keep", [(6,), (-1,), (True,)])
def test_keep_inputs_outside_the_blocks_is_refused(keep):
    """A statistics block that the model does not have (e.g. SmolLM2's block 29 on Gemma-3's 18) is an error
    naming keep_inputs, not silently no inputs."""
    with pytest.raises(ValueError, match="^keep_inputs="):
        dense_statistics(list(planted_outlier_network(seed=0)), torch.randn(8, 128), keep_inputs=keep)


def test_nan_weights_are_refused():
    net = planted_outlier_network(seed=0)
    net[2][0].weight.data[0, 0] = float("inf")
    with pytest.raises(ValueError, match="weight of block 2"):
        prune_blocks(list(net), torch.randn(8, 128), [0.5] * 6, WANDA)


def test_a_searched_metric_runs_through_the_procedure():
    net = planted_outlier_network(seed=2)
    metric = parse_metric("abs(W) * X ** 2 + 0.1 * row_mean")
    result = prune_blocks(list(net), torch.randn(32, 128), [0.7] * 6, metric)
    assert np.isclose(result.total_sparsity, int(128 * 0.7) / 128)
