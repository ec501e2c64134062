"""Uniform, OWL and SDSA allocations; the planted-outlier network as a deterministic check."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_autoprune.allocation import allocate, outlier_ratio, owl, sdsa, skewness, tied_skews, uniform
from icml26_autoprune.data import planted_outlier_network
from icml26_autoprune.metric import WANDA
from icml26_autoprune.pruning import LayerStats, dense_statistics, prune_blocks
from scipy.stats import skew


def stats_from(weights):
    return [{"0": LayerStats(torch.tensor(w, dtype=torch.float32), torch.ones(w.shape[1]))} for w in weights]


@given(st.integers(0, 10_000))
def test_skewness_matches_scipy(seed):
    a = np.random.default_rng(seed).standard_t(3, size=500)
    assert skewness(torch.tensor(a)) == pytest.approx(skew(a, bias=True), rel=1e-9, abs=1e-12)


def test_owl_follows_its_code_by_hand():
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((8, 16)) for _ in range(4)]
    weights[1][0, :4] = 50.0  # block 1 gets outliers
    stats = stats_from(weights)
    D = np.array([100 * np.mean(np.abs(w) > 5 * np.abs(w).mean()) for w in weights])
    assert [outlier_ratio(torch.tensor(np.abs(w).flatten())) for w in weights] == pytest.approx(D)
    d = (D - D.min()) / (D.max() - D.min()) * 2 * 0.08
    d = d - d.mean() + (1 - 0.7)
    assert owl(stats, 0.7) == pytest.approx(list(1 - d))
    assert np.argmin(owl(stats, 0.7)) == 1 and np.mean(owl(stats, 0.7)) == pytest.approx(0.7)


def test_owl_without_outlier_differences_is_uniform():
    stats = stats_from([np.ones((4, 8))] * 3)
    assert owl(stats, 0.5) == pytest.approx(uniform(3, 0.5))


@given(st.integers(0, 10_000), st.floats(0.2, 0.8), st.floats(0.0, 0.15))
def test_sdsa_mean_is_the_target_and_skew_gets_lower_sparsity(seed, s, lam):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_t(df, size=(8, 32)) for df in (1.5, 3, 30, 100)]
    out = sdsa(stats_from(weights), s, lam=min(lam, s, 0.99 - s))
    assert np.mean(out) == pytest.approx(s, abs=1e-9)
    assert all(abs(v - s) <= lam + 1e-9 for v in out)
    gamma = [skew(np.abs(w).flatten()) for w in weights]
    assert out[int(np.argmax(gamma))] == pytest.approx(min(out))


@given(st.integers(0, 10_000), st.lists(st.floats(-3, 3), min_size=2, max_size=6), st.floats(0.2, 0.8))
def test_sdsa_equal_skews_give_exactly_the_uniform_allocation(seed, log_scales, s):
    """Rescaled copies of one block: equal skewness, float32 rounding apart (the issue's [0.667, 0.575, ...])."""
    W = torch.randn(64, 96, generator=torch.Generator().manual_seed(seed))
    stats = [{"0": LayerStats(W * 10.0**c, torch.ones(96))} for c in log_scales]
    assert sdsa(stats, s, lam=min(0.08, s, 0.99 - s)) == uniform(len(log_scales), s)


@given(st.integers(0, 10_000), st.lists(st.floats(-3, 3), min_size=4, max_size=4), st.floats(0.2, 0.8))
def test_sdsa_is_invariant_to_rescaling_layers(seed, log_scales, s):
    """Skewness is scale-free, so rescaling each block leaves the allocation as it is (equal to 1e-9, far below
    a weight: 1/in_features = 3e-2 here), and the two copies of one block get exactly equal sparsities."""
    rng = np.random.default_rng(seed)
    weights = [rng.standard_t(df, size=(8, 32)).astype(np.float32) for df in (1.5, 3, 30)]
    weights.append(weights[0])  # a copy of block 0: equal skewness
    lam = min(0.08, s, 0.99 - s)
    reference = sdsa(stats_from(weights), s, lam=lam)
    scaled = [{"0": LayerStats(torch.tensor(w) * 10.0**c, torch.ones(32))} for w, c in zip(weights, log_scales)]
    out = sdsa(scaled, s, lam=lam)
    assert out == pytest.approx(reference, abs=1e-9)
    assert out[0] == out[3] and reference[0] == reference[3]
    assert np.mean(out) == pytest.approx(s, abs=1e-9) and all(abs(v - s) <= lam + 1e-9 for v in out)
    assert max(out) - min(out) > lam  # the distinct skews still spread the allocation


def test_tied_skews_joins_runs_closer_than_the_tolerance():
    gamma = np.array([1.0, 3.0, 1.0 + 4e-8, 2.0, 1.0 - 4e-8])
    assert tied_skews(gamma, 1e-6).tolist() == [1.0, 3.0, 1.0, 2.0, 1.0]
    assert tied_skews(gamma, 1e-9).tolist() == gamma.tolist()


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda st_: allocate("random", st_, 0.5), "allocation='random'"),
        (lambda st_: allocate("owl", st_, 1.0), "sparsity=1.0"),
        (lambda st_: owl(st_, 0.5, lam=-0.1), "lam=-0.1"),
        (lambda st_: sdsa(st_, 0.95, lam=0.08), "lam=0.08"),
        (lambda st_: sdsa(st_, 0.5, T=0.0), "T=0.0"),
        (lambda st_: sdsa(st_, 0.5, skew_of="bias"), "skew_of='bias'"),
        (lambda st_: owl(st_, 0.5, M=0), "M=0"),
    ],
)
def test_bad_allocation_arguments(call, named):
    with pytest.raises(ValueError, match=f"^{named}"):
        call(stats_from([np.eye(4), np.ones((4, 4))]))


def planted_errors(seed, sparsity):
    x = torch.randn(4096, 128, generator=torch.Generator().manual_seed(seed))
    held_out = torch.randn(1024, 128, generator=torch.Generator().manual_seed(100 + seed))
    reference = planted_outlier_network(seed)
    with torch.no_grad():
        target = reference(held_out)
    stats = dense_statistics(list(reference), x)
    errors = {}
    for name in ("uniform", "owl", "sdsa"):
        net = planted_outlier_network(seed)
        prune_blocks(list(net), x, allocate(name, stats, sparsity), WANDA)
        with torch.no_grad():
            errors[name] = float((net(held_out) - target).norm() / target.norm())
    return errors


def test_planted_outlier_network_deterministic_check():
    """The spec expected SDSA < uniform here; measured, the opposite holds: heavy-tailed (Student-t) layers lose
    little when pruned (their small weights carry little energy), so protecting them costs the Gaussian layers.
    SDSA does protect the most skewed block, and 70% hurts more than 50% (see the README)."""
    low, high = planted_errors(0, 0.5), planted_errors(0, 0.7)
    assert high["uniform"] > 1.3 * low["uniform"]
    assert high["sdsa"] > high["uniform"] * 1.02  # the reversed direction (0.456 vs 0.435), far above float noise
