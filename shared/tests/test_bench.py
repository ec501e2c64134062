"""Benchmarks: ratios say how many times better the method is, bench.json keeps one entry per script, the
report's Performance section reads it, and a package's benchmarks run at their tiny size in its tests."""

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from icml26_shared.bench import Benchmark, Case, best_seconds, interleaved_seconds, measure, read_bench, write_bench
from icml26_shared.report import BENCH_END, BENCH_START, bench_block, performance, update_bench_block
from icml26_shared.testing import check_benchmarks

SCRIPT = '''
"""Demo: sum by a loop against sum by Python's builtin."""
from icml26_shared.bench import Benchmark, Case, bench_main, best_seconds


def run(tiny: bool) -> Benchmark:
    n = 10 if tiny else 10_000
    xs = list(range(n))
    loop = best_seconds(lambda: [x for x in xs])
    builtin = best_seconds(lambda: sum(xs))
    return Benchmark("builtin sum vs a list comprehension", (Case(f"n={n}", "comprehension", builtin, loop),))


if __name__ == "__main__":
    raise SystemExit(bench_main("demo", run))
'''


def test_a_ratio_is_how_many_times_better_ours_is_whatever_the_unit():
    assert Case("n=1", "POT", ours=2.0, baseline=6.0).ratio == 3.0  # seconds: baseline / ours
    assert Case("n=1", "softmax", ours=50.0, baseline=200.0, unit="MB").ratio == 4.0
    assert Case("n=1", "softmax", ours=300.0, baseline=100.0, unit="tokens/s").ratio == 3.0  # ours / baseline
    bench = Benchmark("x", (Case("a", "p", 1.0, 2.0), Case("b", "p", 1.0, 8.0), Case("a", "q", 2.0, 1.0)))
    assert bench.headlines() == pytest.approx({"p": 4.0, "q": 0.5})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"unit": "furlongs"}, "unit='furlongs': expected one of"),
        ({"ours": 0.0}, "ours=0.0: expected a finite measurement > 0 in s (case 'c')"),
        ({"baseline": math.nan}, "baseline=nan: expected a finite measurement > 0"),
    ],
)
def test_bad_cases_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Case(**{"case": "c", "against": "b", "ours": 1.0, "baseline": 1.0, **kwargs})
    with pytest.raises(ValueError, match="cases=\\(\\): expected at least one measured Case"):
        Benchmark("x", ())


def test_timers_count_every_call():
    calls = []
    assert best_seconds(lambda: calls.append(1), repeats=4) >= 0 and len(calls) == 4
    a, b = interleaved_seconds([lambda: calls.append("a"), lambda: calls.append("b")], rounds=3)
    assert calls[4:] == ["a", "b"] * 3 and a >= 0 and b >= 0
    with pytest.raises(ValueError, match="repeats=0"):
        best_seconds(lambda: None, repeats=0)
    ticks = iter(range(100))
    assert best_seconds(lambda: None, repeats=2, clock=lambda: float(next(ticks))) == 1.0  # the clock given
    assert Case("n=1", "exhaustive", ours=10, baseline=40, unit="evaluations").ratio == 4.0


def test_bench_json_keeps_one_entry_per_script_and_the_report_reads_it(tmp_path):
    def run(tiny):
        return Benchmark("ours vs base", (Case("n=1", "base", 1.0, 2.0), Case("n=2", "base", 1.0, 8.0)))

    _bench, first = measure("demo", "bench_a", run)
    assert first.headlines == {"base": 4.0} and first.load_start == first.load_start and not first.tiny
    write_bench(first, tmp_path)
    _bench, again = measure("demo", "bench_a", run, tiny=True)
    _bench, other = measure("demo", "bench_b", run)
    write_bench(again, tmp_path)
    path = write_bench(other, tmp_path)
    entries = read_bench(path)
    assert sorted(entries) == ["bench_a", "bench_b"] and entries["bench_a"]["tiny"] is True
    rows = [line for line in performance(tmp_path) if line.startswith("| [`demo`]")]
    assert len(rows) == 2 and "| base | 4x | 2 |" in rows[1] and "(tiny: not a measurement)" in rows[0]
    path.write_text("{not json")
    with pytest.raises(ValueError, match="bench.json"):
        write_bench(other, tmp_path)
    assert "unreadable" in "\n".join(performance(tmp_path))


def test_a_benchmark_that_restores_the_thread_count_names_the_count_it_timed_with():
    case = Case("n=1", "base", 1.0, 2.0)
    _bench, record = measure("demo", "bench_a", lambda tiny: Benchmark("x", (case,), threads=1))
    assert record.threads == 1
    with pytest.raises(ValueError, match="threads=0"):
        Benchmark("x", (case,), threads=0)


def test_the_readme_block_is_written_from_bench_json_and_nothing_else(tmp_path):
    def run(tiny):
        cases = (Case("n=1", "base | x", 1.0, 2.0), Case("n=2", "base | x", 4.0, 1.0, unit="tokens/s"))
        return Benchmark("ours vs base", cases, notes="release 3 s")

    _bench, record = measure("demo", "bench_a", run)
    bench = write_bench(record, tmp_path)
    block = bench_block(bench)
    assert block[0].startswith("`bench_a`: ours vs base. Measured in") and "release 3 s" in block
    rows = [line for line in block if line.startswith("| n=")]
    assert rows == ["| n=1 | base \\| x | 1 | 2 | s | 2x |", "| n=2 | base \\| x | 4 | 1 | tokens/s | 4x |"]
    assert "Geometric mean ratio per baseline: base \\| x 2.83x." in block
    readme = tmp_path / "README.md"
    readme.write_text(f"# demo\nprose 1.5x\n{BENCH_START}\nhand-copied 9x\n{BENCH_END}\nafter\n")
    assert update_bench_block(readme, bench) is True
    text = readme.read_text()
    assert "hand-copied" not in text and text.startswith("# demo\nprose 1.5x\n")
    assert text.endswith(f"{BENCH_END}\nafter\n")
    assert "\n".join(block) in text and update_bench_block(readme, bench) is False  # idempotent
    readme.write_text("# no markers\n")
    with pytest.raises(ValueError, match="expected one <!-- bench.json:start"):
        update_bench_block(readme, bench)


def test_a_script_prints_its_table_and_writes_bench_json(tmp_path):
    package = tmp_path / "demo"
    (package / "benchmarks").mkdir(parents=True)
    script = package / "benchmarks" / "bench_sum.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = subprocess.run(
        [sys.executable, str(script), "--tiny", "--out", str(tmp_path / "res")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "geometric mean ratio vs comprehension" in out.stdout and "load average" in out.stdout
    data = json.loads((tmp_path / "res" / "demo" / "bench.json").read_text())
    assert data["benchmarks"]["bench_sum"]["compares"] == "builtin sum vs a list comprehension"
    (record,) = check_benchmarks(package)
    assert record.tiny and record.cases[0]["case"] == "n=10"
    with pytest.raises(ValueError, match="a package with benchmarks/bench_"):
        check_benchmarks(tmp_path)


def test_benchmark_numbers_in_the_package_readmes_are_their_bench_json():
    """Every package with benchmarks keeps their numbers between the bench markers, as `icml26 report
    --readme README.md` writes them from results/<slug>/bench.json: none is copied by hand (issue 28.2)."""
    repo = Path(__file__).resolve().parents[2]
    for pkg in sorted({p.parent.parent for p in (repo / "packages").glob("*/benchmarks/bench_*.py")}):
        text = (pkg / "README.md").read_text()
        assert text.count(BENCH_START) == 1 and text.count(BENCH_END) == 1, f"{pkg.name}: README lacks bench markers"
        bench = repo / "results" / pkg.name / "bench.json"
        if bench.is_file():
            block = text.split(BENCH_START, 1)[1].split(BENCH_END, 1)[0]
            assert block == "\n" + "\n".join(bench_block(bench)) + "\n", f"{pkg.name}: run icml26 report --readme"
