"""The closed-form engram against brute force: least squares, the natural gradient, composition, statistics."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_ai_engrams import (
    MLP,
    Statistics,
    collect_statistics,
    compute_engram,
    compute_engrams,
    default_rtol,
    erase,
    natural_gradient_step,
    spectral_pinv,
    supported_layers,
)
from icml26_ai_engrams.method import augmented_weight, total_pinv
from torch import nn


def linear(in_dim=5, out_dim=3, seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(in_dim, out_dim)).double()


def aug(x):
    return torch.cat([x, torch.ones(len(x), 1, dtype=x.dtype)], 1)


def test_engram_is_the_least_squares_solution():
    """E* = argmin_E sum_{x in U} ||E x~ - 1[x in T] W~ x~||^2 (minimum norm), solved by lstsq."""
    model = linear()
    x = torch.randn(40, 5, dtype=torch.float64)
    in_target = torch.arange(40) < 15
    engram = compute_engram(model, collect_statistics(model, x[in_target]), collect_statistics(model, x))
    w = augmented_weight(model[0])
    targets = (aug(x) @ w.T) * in_target[:, None]
    solution = torch.linalg.lstsq(aug(x), targets).solution.T  # (out, in + 1)
    assert torch.allclose(engram.augmented("0"), solution, atol=1e-10)


def test_engram_is_one_natural_gradient_step():
    model = linear(4, 3)
    x = torch.randn(30, 4, dtype=torch.float64)
    engram = compute_engram(model, collect_statistics(model, x[:9]), collect_statistics(model, x))
    step = natural_gradient_step(augmented_weight(model[0]), aug(x[:9]), aug(x))
    assert torch.allclose(engram.augmented("0"), step, atol=1e-9)


def test_disjoint_subspaces_give_exact_necessity_and_specificity():
    """T and the rest in orthogonal input subspaces: E x = W x on T and E x = 0 off T (bias-free layer)."""
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(6, 4, bias=False)).double()
    target = torch.cat([torch.randn(20, 3, dtype=torch.float64), torch.zeros(20, 3, dtype=torch.float64)], 1)
    rest = torch.cat([torch.zeros(25, 3, dtype=torch.float64), torch.randn(25, 3, dtype=torch.float64)], 1)
    engram = compute_engram(
        model, collect_statistics(model, target), collect_statistics(model, torch.cat([target, rest]))
    )
    erased = erase(model, engram)
    assert torch.allclose(erased(target), torch.zeros(20, 4, dtype=torch.float64), atol=1e-10)
    assert torch.allclose(erased(rest), model(rest), atol=1e-10)


@given(st.integers(0, 10_000), st.integers(2, 5))
def test_union_engram_is_the_sum_of_engrams(seed, parts):
    """Composition: for a partition {T_j} of a full-rank total, sum_j E_j = E(union) and = W."""
    generator = torch.Generator().manual_seed(seed)
    model = MLP(4, (6,), 3)
    x = torch.rand(12 * parts, 4, generator=generator)
    labels = torch.arange(len(x)) % parts
    stats = {j: collect_statistics(model, x[labels == j]) for j in range(parts)}
    total = collect_statistics(model, x)
    engrams = compute_engrams(model, {**stats, "ab": stats[0] + stats[1]}, total)
    for name in engrams["ab"].weight:
        summed = engrams[0].augmented(name) + engrams[1].augmented(name)
        assert torch.allclose(engrams["ab"].augmented(name), summed, atol=1e-10)
    everything = sum((engrams[j] for j in range(1, parts)), engrams[0])
    first = supported_layers(model)["layers.0"]
    assert torch.allclose(everything.augmented("layers.0"), augmented_weight(first), atol=1e-8)


def test_erase_with_alpha_zero_is_a_no_op_and_does_not_touch_the_original():
    model = MLP(5, (7,), 3)
    x = torch.rand(20, 5)
    engram = compute_engram(model, collect_statistics(model, x[:8]), collect_statistics(model, x))
    before = model(x).detach().clone()
    assert torch.equal(erase(model, engram, 0.0)(x), before)
    erase(model, engram, 1.0)
    assert torch.equal(model(x), before)
    assert torch.allclose(erase(erase(model, engram, 0.4), engram, 0.6)(x), erase(model, engram, 1.0)(x), atol=1e-5)


def test_statistics_stream_merge_and_mask():
    model = MLP(3, (4,), 2)
    x = torch.rand(11, 3)
    streamed = collect_statistics(model, x, batch_size=3)
    direct = aug(x.double())
    assert torch.allclose(streamed.cov["layers.0"], direct.T @ direct / 11, atol=1e-12)
    assert streamed.count["layers.0"] == 11
    merged = collect_statistics(model, x[:4]) + collect_statistics(model, x[4:])
    assert torch.allclose(merged.cov["layers.1"], streamed.cov["layers.1"], atol=1e-12)
    mask = torch.tensor([True, False] * 5 + [True])
    masked = collect_statistics(model, x, mask=mask)
    assert torch.allclose(masked.cov["layers.1"], collect_statistics(model, x[mask]).cov["layers.1"], atol=1e-12)


class GatedMLP(nn.Module):
    """SmolLM2's MLP (gate and up read the same x, no biases) beside a biased layer reading that x too."""

    def __init__(self, dim=4, hidden=6, share=True):
        super().__init__()
        self.share = share
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down, self.biased = nn.Linear(hidden, dim, bias=False), nn.Linear(dim, dim)

    def forward(self, x):
        up = self.up(x if self.share or len(x) > 2 else x.clone())  # share=False: a batch of 2 reads a copy
        return self.down(torch.nn.functional.silu(self.gate(x)) * up) + self.biased(x)


def test_layers_reading_the_same_input_share_one_matrix():
    """q/k/v (and gate/up) hold one covariance, equal to the one each collects alone; issue 25's memory."""
    from icml26_ai_engrams import TinyLM

    torch.manual_seed(0)
    lm = TinyLM(9, 5, dim=8, heads=2, layers=1)
    ids = torch.randint(0, 9, (6, 5))
    stats = collect_statistics(lm, ids, batch_size=4)
    assert stats.cov["blocks.0.q"] is stats.cov["blocks.0.k"] is stats.cov["blocks.0.v"]
    assert len({id(c) for c in stats.cov.values()}) == 5  # qkv, o, up, down, head
    order = ["blocks.0.q", "blocks.0.k", "blocks.0.v", "blocks.0.o", "blocks.0.up", "blocks.0.down", "head"]
    assert list(stats.cov) == order  # the forward's order, which random_direction draws in
    for name in stats.cov:
        alone = collect_statistics(lm, ids, layers=[name], batch_size=4)
        assert torch.equal(stats.cov[name], alone.cov[name]) and stats.count[name] == alone.count[name] == 30
    mlp, x = GatedMLP(), torch.rand(5, 4)
    gated = collect_statistics(mlp, x, batch_size=2)
    assert gated.cov["gate"] is gated.cov["up"] and len({id(c) for c in gated.cov.values()}) == 3  # +down, biased
    assert torch.equal(gated.cov["gate"], collect_statistics(mlp, x, layers=["gate"], batch_size=2).cov["gate"])


def test_shared_statistics_stay_shared_and_apart_where_they_should():
    """merge and total_pinv keep one matrix per shared input; update replaces a matrix, never writes into it."""
    from icml26_ai_engrams import TinyLM

    torch.manual_seed(0)
    lm = TinyLM(9, 5, dim=8, heads=2, layers=1)
    first, second = (collect_statistics(lm, torch.randint(0, 9, (4, 5))) for _ in range(2))
    merged = first + second
    assert merged.cov["blocks.0.q"] is merged.cov["blocks.0.v"] and merged.count["blocks.0.q"] == 40
    pinv = total_pinv(merged)
    assert pinv["blocks.0.q"] is pinv["blocks.0.k"] and pinv["blocks.0.q"] is not pinv["blocks.0.o"]
    k_before = first.cov["blocks.0.k"].clone()
    first.update("blocks.0.q", torch.rand(3, 9, dtype=torch.float64))
    assert torch.equal(first.cov["blocks.0.k"], k_before) and first.count["blocks.0.k"] == 20


def test_collect_rejects_layers_that_share_an_input_in_one_batch_only():
    with pytest.raises(RuntimeError, match="layer gate: its input was up's in an earlier batch and is gate's now"):
        collect_statistics(GatedMLP(share=False), torch.rand(5, 4), batch_size=3)  # batches of 3, then 2


@given(st.integers(0, 10_000))
def test_spectral_pinv_matches_torch_pinv_and_cuts(seed):
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(6, 6, generator=generator, dtype=torch.float64)
    c = a @ a.T + 0.1 * torch.eye(6, dtype=torch.float64)
    assert torch.allclose(spectral_pinv(c), torch.linalg.pinv(c, hermitian=True), atol=1e-8)
    u = torch.linalg.qr(a).Q
    lam = torch.tensor([1.0, 0.5, 0.1, 1e-3, 1e-9, 0.0], dtype=torch.float64)
    c = (u * lam) @ u.T
    kept = (u[:, :4] / lam[:4]) @ u[:, :4].T  # 1e-9 < 6 * eps32 * 1: cut
    assert torch.allclose(spectral_pinv(c), kept, rtol=1e-6, atol=1e-6)
    assert torch.allclose(spectral_pinv(c, condition_cap=50), (u[:, :3] / lam[:3]) @ u[:, :3].T, atol=1e-6)
    assert torch.allclose(spectral_pinv(c, rank_fraction=0.2), (u[:, :2] / lam[:2]) @ u[:, :2].T, atol=1e-6)
    assert default_rtol(6) == pytest.approx(6 * 1.1920929e-7)


def test_engram_class_is_a_vector_space():
    model = MLP(3, (4,), 2)
    x = torch.rand(10, 3)
    e = compute_engram(model, collect_statistics(model, x[:4]), collect_statistics(model, x))
    assert torch.allclose((2 * e - e).augmented("layers.1"), e.augmented("layers.1"))
    assert np.isclose((e * 3.0).norms()["layers.0"], 3 * e.norms()["layers.0"])


def test_shared_pinv_gives_the_same_engram_as_computing_it_again():
    """``total_pinv`` once, then one target set at a time: the engrams are those of one call with every target."""
    torch.manual_seed(0)
    model = MLP(5, (7,), 3)
    x = torch.rand(30, 5)
    total = collect_statistics(model, x)
    targets = {"a": collect_statistics(model, x[:6]), "b": collect_statistics(model, x[6:11])}
    together = compute_engrams(model, targets, total, condition_cap=1e6)
    pinv = total_pinv(total, condition_cap=1e6)
    for key, target in targets.items():
        alone = compute_engrams(model, {key: target}, total, pinv=pinv)[key]
        for name in alone.weight:
            assert torch.equal(alone.augmented(name), together[key].augmented(name))


# ---- bad inputs: one test per validated argument -------------------------------------------------


@pytest.fixture
def setup():
    model = MLP(3, (4,), 2)
    x = torch.rand(10, 3)
    return model, collect_statistics(model, x[:4]), collect_statistics(model, x)


def test_rejects_target_without_samples(setup):
    model, _, total = setup
    empty = collect_statistics(model, torch.rand(3, 3), mask=torch.zeros(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="targets=.*0 samples"):
        compute_engram(model, empty, total)


def test_rejects_target_larger_than_total(setup):
    model, target, _ = setup
    with pytest.raises(ValueError, match="targets=.*subset"):
        compute_engram(model, collect_statistics(model, torch.rand(20, 3)), target)


def test_rejects_covariance_of_wrong_shape(setup):
    model, target, total = setup
    bad = Statistics({k: torch.eye(2, dtype=torch.float64) for k in total.cov}, dict(total.count))
    with pytest.raises(ValueError, match="total="):
        compute_engram(model, target, bad)


def test_rejects_non_finite_target_statistics(setup):
    model, target, total = setup
    bad = Statistics({k: torch.full_like(v, float("nan")) for k, v in target.cov.items()}, dict(target.count))
    with pytest.raises(ValueError, match="targets=.*non-finite"):
        compute_engram(model, bad, total)


def test_rejects_statistics_of_other_layers(setup):
    _, target, total = setup
    with pytest.raises(ValueError, match="total="):
        compute_engram(nn.Sequential(nn.Linear(3, 2)), target, total)


def test_rejects_pinv_with_a_cut_or_of_other_layers(setup):
    model, target, total = setup
    pinv = total_pinv(total)
    with pytest.raises(ValueError, match="pinv="):
        compute_engram(model, target, total, pinv=pinv, rtol=1e-3)
    with pytest.raises(ValueError, match="pinv="):
        compute_engram(model, target, total, pinv={"layers.0": pinv["layers.0"]})
    empty = collect_statistics(model, torch.rand(3, 3), mask=torch.zeros(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="total=.*0 samples"):
        total_pinv(empty)


def test_rejects_no_targets(setup):
    model, _, total = setup
    with pytest.raises(ValueError, match="targets="):
        compute_engrams(model, {}, total)


def test_rejects_non_finite_alpha(setup):
    model, target, total = setup
    with pytest.raises(ValueError, match="alpha="):
        erase(model, compute_engram(model, target, total), float("nan"))


def test_rejects_engram_of_another_model(setup):
    model, target, total = setup
    with pytest.raises(ValueError, match="engram="):
        erase(MLP(3, (5,), 2), compute_engram(model, target, total))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"condition_cap": 1.0}, "condition_cap"),
        ({"condition_cap": 10.0, "rtol": 1e-3}, "condition_cap"),
        ({"rank_fraction": 0.0}, "rank_fraction"),
        ({"rank_fraction": 1.5}, "rank_fraction"),
        ({"rtol": -1.0}, "rtol"),
    ],
)
def test_spectral_pinv_rejects_bad_cuts(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        spectral_pinv(torch.eye(3), **kwargs)


@pytest.mark.parametrize(
    "cov", [torch.ones(2, 3), torch.tensor([[1.0, 2.0], [0.0, 1.0]]), torch.tensor([[float("nan"), 0], [0, 1.0]])]
)
def test_spectral_pinv_rejects_bad_covariance(cov):
    with pytest.raises(ValueError, match="cov="):
        spectral_pinv(cov)


def test_collect_rejects_bad_mask_and_inputs():
    model = MLP(3, (4,), 2)
    with pytest.raises(ValueError, match="mask="):
        collect_statistics(model, torch.rand(5, 3), mask=torch.ones(4, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask="):
        collect_statistics(model, torch.rand(5, 3), mask=torch.ones(5))
    with pytest.raises(ValueError, match="inputs="):
        collect_statistics(model, torch.rand(0, 3))


def test_collect_rejects_batches_that_do_not_match_the_model():
    with pytest.raises(ValueError, match="x="):
        collect_statistics(MLP(3, (4,), 2), torch.rand(5, 7))


def test_collect_rejects_unsupported_and_unknown_layers():
    model = nn.Sequential(nn.Conv1d(1, 1, 1))
    with pytest.raises(TypeError, match="supported"):
        collect_statistics(model, torch.rand(2, 1, 3))
    with pytest.raises(TypeError, match="Conv1d"):
        collect_statistics(model, torch.rand(2, 1, 3), layers=["0"])
    with pytest.raises(ValueError, match="layers="):
        collect_statistics(MLP(3, (4,), 2), torch.rand(2, 3), layers=["nope"])


def test_natural_gradient_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="target_inputs="):
        natural_gradient_step(torch.ones(2, 3), torch.ones(4, 2), torch.ones(4, 3))
