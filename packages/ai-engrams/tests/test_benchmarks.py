"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert record.headlines.keys() == {"gradient ascent to the same forgetting"} and len(record.cases) == 2
    assert "steps per class" in record.notes
