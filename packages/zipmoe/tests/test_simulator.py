"""The discrete-event replay of router traces."""

import numpy as np
import pytest
from icml26_zipmoe import Device, HierarchicalCache, LoadTask
from icml26_zipmoe.baselines import LRUCache, NoCache
from icml26_zipmoe.simulator import replay

DEVICE = Device(bandwidth=1e6, decompress_rate=1e7, workers=2, latency=0.0)


def task(layer, expert, kind, tokens):
    return LoadTask(expert, kind, tokens, e_chunks=(400,) * 2, e_raw=(1000,) * 2, sm_bytes=2000, raw_bytes=4000)


def test_no_cache_latency_by_hand():
    """Each step needs experts {0, 1} (raw, 4 ms each, one channel): 8 ms per layer; compute is free."""
    trace = np.array([[[[0, 1]]], [[[1, 0]]]])  # (steps=2, layers=1, batch=1, k=2)
    result = replay(trace, NoCache(), task, DEVICE, compute=0.0, dense=0.0, compressed=False)
    assert result.load_latency == pytest.approx(8e-3)
    assert result.tokens_per_second == pytest.approx(2 / 16e-3)


def test_a_cache_that_holds_everything_costs_only_the_first_load():
    trace = np.tile(np.array([[[[0, 1]]]]), (10, 1, 1, 1))
    result = replay(trace, LRUCache(1, 2), task, DEVICE, compute=1e-4, dense=1e-4, compressed=False)
    assert result.load_latency == pytest.approx(8e-3 / 10)


def test_compressed_format_reads_fewer_bytes_than_raw():
    trace = np.random.default_rng(0).integers(0, 8, size=(20, 2, 2, 2))
    zipped = replay(trace, HierarchicalCache(2, 8, 1, 2), task, DEVICE, 1e-4, 1e-4)
    raw = replay(trace, NoCache(), task, DEVICE, 1e-4, 1e-4, compressed=False)
    assert zipped.load_latency < raw.load_latency and zipped.tokens_per_second > raw.tokens_per_second


def test_bad_inputs():
    trace = np.zeros((1, 1, 1, 2), dtype=int)
    with pytest.raises(ValueError, match="compute/dense="):
        replay(trace, NoCache(), task, DEVICE, -1.0, 0.0)
    with pytest.raises(ValueError, match="schedule="):
        replay(trace, NoCache(), task, DEVICE, 0.0, 0.0, schedule="random")
    with pytest.raises(ValueError, match="trace="):
        replay(np.zeros((2, 2)), NoCache(), task, DEVICE, 0.0, 0.0)
