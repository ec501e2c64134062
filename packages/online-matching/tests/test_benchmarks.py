"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    (record,) = check_benchmarks(Path(__file__).parents[1])
    assert record.headlines.keys() == {"uncoarsened LP solve (b=1)", "uncoarsened decision (b=1)"}
    assert len(record.cases) == 4  # two cluster sizes, each an LP solve and a decision time
