"""Baseline caches (no cache, LRU, LFU) and raw-byte zstd."""

import pytest
import torch
from icml26_zipmoe import HierarchicalCache
from icml26_zipmoe.baselines import LFUCache, LRUCache, NoCache, full_slots, raw_zstd_ratio


def test_lru_evicts_least_recently_used():
    cache = LRUCache(num_layers=1, capacity=2)
    for expert in (1, 2, 1, 3):  # 3 evicts 2, the least recently used
        cache.access(0, {expert: 1})
    assert [cache.state(0, e) for e in (1, 2, 3)] == ["full", None, "full"]


def test_lfu_evicts_least_frequently_used():
    cache = LFUCache(num_layers=1, capacity=2)
    for expert in (1, 1, 2, 3):  # 2 and 3 used once, 2 older: 2 goes
        cache.access(0, {expert: 1})
    assert [cache.state(0, e) for e in (1, 2, 3)] == ["full", None, "full"]


def test_lfu_keeps_the_current_layer_experts():
    cache = LFUCache(num_layers=1, capacity=2)
    cache.access(0, {1: 1})
    cache.access(0, {1: 1})
    cache.access(0, {2: 1, 3: 1})
    assert cache.state(0, 1) is None and cache.state(0, 2) == cache.state(0, 3) == "full"


def test_no_cache_never_hits():
    cache = NoCache()
    cache.access(0, {1: 1})
    assert cache.state(0, 1) is None


def test_hierarchical_cache_places_by_popularity_rank():
    """1 full slot, 1 SM slot: the most requested expert ends in the full slot, the next in the SM slot."""
    cache = HierarchicalCache(num_layers=1, num_experts=4, n_full=1, n_sm=1)
    cache.access(0, {0: 5})
    assert cache.state(0, 0) == "full"
    cache.access(0, {1: 2})  # rank 1 -> an SM slot
    assert cache.state(0, 1) == "sm"
    cache.access(0, {2: 1})  # rank >= 2, no free slot: used once, not kept
    assert cache.state(0, 2) is None and cache.state(0, 1) == "sm"
    cache.access(0, {3: 9})  # now the most popular: takes the full slot, evicting expert 0
    assert cache.state(0, 3) == "full" and cache.state(0, 0) is None


def test_hierarchical_cache_never_exceeds_its_slots():
    import numpy as np

    cache = HierarchicalCache(num_layers=2, num_experts=8, n_full=2, n_sm=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        layer = int(rng.integers(2))
        need = {int(e): int(rng.integers(1, 4)) for e in rng.choice(8, 2, replace=False)}
        cache.access(layer, need)
        assert len(cache.full[layer]) <= 2 and len(cache.sm[layer]) <= 3
        assert not set(cache.full[layer]) & set(cache.sm[layer])


def test_raw_zstd_barely_compresses_gaussian_bf16():
    x = (torch.randn(100_000, generator=torch.Generator().manual_seed(0)) * 0.02).to(torch.bfloat16)
    assert 0.7 < raw_zstd_ratio([x]) < 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="capacity="):
        LRUCache(2, 0)
    with pytest.raises(ValueError, match="capacity="):
        LFUCache(2, 0)
    with pytest.raises(ValueError, match="budget="):
        full_slots(1999, 1000)  # a cache budget below one expert
    with pytest.raises(ValueError, match="n_full \\+ n_sm="):
        HierarchicalCache(1, 4, 0, 0)  # a budget below one expert: no slot at all
    with pytest.raises(ValueError, match="n_sm="):
        HierarchicalCache(1, 4, 2, 3)
    with pytest.raises(TypeError, match="dtype"):
        raw_zstd_ratio([torch.zeros(3)])
