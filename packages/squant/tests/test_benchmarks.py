"""The benchmark runs at its tiny size (its ratios mean nothing there), so that it cannot rot."""

from pathlib import Path

from icml26_shared.testing import check_benchmarks


def test_benchmarks_run_at_tiny_size():
    (record,) = check_benchmarks(Path(__file__).parents[1])
    baselines = {f"{b} ({m})" for b in ("dense float16", "RTN 4-bit g128") for m in ("decode time", "bytes")}
    assert record.headlines.keys() == baselines and len(record.cases) == 6
    # byte counts are exact: a ~4-bit seed code stores about 4x fewer bytes than float16 and fewer than RTN g128
    assert 3.9 < record.headlines["dense float16 (bytes)"] <= 4.0
    assert record.headlines["RTN 4-bit g128 (bytes)"] > 1.0
