"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert record.headlines.keys() == {"dense forward", "dense bytes"} and len(record.cases) == 6
    bytes_ratios = [c["ratio"] for c in record.cases if c["unit"] == "B"]
    assert bytes_ratios == sorted(bytes_ratios, reverse=True) and min(bytes_ratios) > 1  # fewer bytes at lower rho
