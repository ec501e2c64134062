"""The event model of a layer's loads and the cache-affinity scheduler (vs brute force)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_zipmoe import Device, LoadTask, affinity_order, makespan, optimal_order
from icml26_zipmoe.scheduler import fifo_order, simulate_loads

DEVICE = Device(bandwidth=1e6, decompress_rate=2e6, workers=2, latency=1e-4)


def task(expert, kind, tokens=1, chunk=2000, sm=8000):
    return LoadTask(expert, kind, tokens, e_chunks=(chunk,) * 4, e_raw=(4000,) * 4, sm_bytes=sm, raw_bytes=16000)


def test_single_raw_read_takes_transfer_plus_latency():
    assert makespan([task(0, "raw")], DEVICE) == pytest.approx(16000 / 1e6 + 1e-4)
    assert makespan([], DEVICE) == 0.0


def test_type_two_task_by_hand():
    """Four 2000-byte reads back to back (2 ms each), two workers decompress 4000 bytes in 2 ms each."""
    ready = simulate_loads([task(0, "sm_hit")], DEVICE)
    reads_end = np.cumsum([2e-3] * 4) + 1e-4
    assert ready[0] == pytest.approx(reads_end[-1] + 2e-3)


def test_more_workers_or_bandwidth_never_slow_down():
    tasks = [task(0, "miss"), task(1, "sm_hit"), task(2, "miss")]
    base = makespan(tasks, DEVICE)
    assert makespan(tasks, Device(1e6, 2e6, 4, 1e-4)) <= base
    assert makespan(tasks, Device(2e6, 2e6, 2, 1e-4)) <= base


@given(st.lists(st.tuples(st.sampled_from(["miss", "sm_hit"]), st.integers(1, 4)), min_size=1, max_size=5))
def test_affinity_order_is_a_permutation_and_near_the_optimum(kinds):
    tasks = [task(i, kind, tokens) for i, (kind, tokens) in enumerate(kinds)]
    order = affinity_order(tasks, DEVICE)
    assert sorted(t.expert for t in order) == list(range(len(tasks)))
    best = makespan(optimal_order(tasks, DEVICE), DEVICE)
    assert best <= makespan(order, DEVICE) <= 1.25 * best
    assert best <= makespan(fifo_order(tasks), DEVICE)


def test_affinity_puts_more_requested_experts_first_within_a_type():
    order = affinity_order([task(0, "miss", 1), task(1, "miss", 3)], DEVICE)
    assert [t.expert for t in order] == [1, 0]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: LoadTask(0, "cached", 1), "kind="),
        (lambda: LoadTask(0, "miss", 0), "tokens="),
        (lambda: LoadTask(0, "miss", 1, e_chunks=(1, 2), e_raw=(1,)), "e_raw="),
        (lambda: Device(0.0, 1.0, 1), "bandwidth="),
        (lambda: Device(1.0, 1.0, 0), "workers="),
        (lambda: optimal_order([task(i, "miss") for i in range(9)], DEVICE), "tasks="),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()
