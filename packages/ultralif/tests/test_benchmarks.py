"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

import torch
from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    threads = torch.get_num_threads()
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert torch.get_num_threads() == threads  # the benchmark runs on one thread; the other tests keep theirs
    assert record.headlines.keys() == {"LIF", "PLIF", "DSpike", "SigmaLIF"}
    assert len(record.cases) == 16 and record.threads == 1  # 4 Ultra neurons x 4 baselines at T = 1
