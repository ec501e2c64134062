"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

import torch
from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    threads = torch.get_num_threads()
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert torch.get_num_threads() == threads  # the benchmark runs on one thread; the other tests keep theirs
    assert record.headlines.keys() == {"exact FD of every candidate", "FD-only lazy greedy"}
    assert record.threads == 1 and "FD evaluations" in record.notes
