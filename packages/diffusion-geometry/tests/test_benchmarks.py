"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert record.headlines.keys() == {"exact sigma_1 (2 power iterations)"} and len(record.cases) == 1
    assert "median LS / sigma_1: D_low=4" in record.notes
