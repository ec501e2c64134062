"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert record.headlines.keys() == {"CE alone", "CE + NTL-WAS"} and len(record.cases) == 4
    assert "ms per step" in record.notes
