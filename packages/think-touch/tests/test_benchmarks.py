"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

import torch
from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    threads = torch.get_num_threads()
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert torch.get_num_threads() == threads  # the benchmark runs on one thread; the other tests keep theirs
    assert record.headlines.keys() == {"full FT (AdamW state)", "full FT (gradients)", "full FT (time per step)"}
    memory = {(c["case"], c["against"]): c["ratio"] for c in record.cases if c["unit"] == "B"}
    # k of G groups hold AdamW state for the bandit; the greedy oracle needs every gradient (ratio 1)
    assert memory["Think-Touch bandit", "full FT (AdamW state)"] > 1
    assert memory["greedy oracle", "full FT (gradients)"] == 1
