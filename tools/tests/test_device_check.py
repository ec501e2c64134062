"""tools/device_check.sh, run here with a fake `icml26` (no GPU, no package environment needed)."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "device_check.sh"
FAKE = """#!/usr/bin/env bash
echo "$@" >> "$(dirname "$0")/calls.txt"
[[ $2 == bad-paper ]] && { echo "missing corpus: expected at /data"; exit 1; }
echo "ok: $*"
"""


def run(*args, env=None):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env, check=False)


def test_it_shell_parses_and_its_help_names_every_argument():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], check=False).returncode == 0
    proc = run("--help")
    assert proc.returncode == 0
    for name in ("OUT_DIR", "TIME_LIMIT_S", "SLUG", "--device", "--no-medium", "$ICML26", "summary.tsv"):
        assert name in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["out"], "expected OUT_DIR TIME_LIMIT_S [SLUG ...] (got 1 arguments)"),
        (["out", "ten"], "TIME_LIMIT_S='ten': expected a whole number of seconds >= 1"),
        (["--device", "tpu", "out", "10"], "--device='tpu': expected cuda or cpu"),
        (["--fast", "out", "10"], "option --fast: expected --device, --no-medium or --help"),
        (["out", "10", "no-such-paper"], "SLUG='no-such-paper': expected a folder of"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, args, message):
    proc = run(*[str(tmp_path / a) if a == "out" else a for a in args])
    assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.splitlines()) == 1


def fake_icml26(tmp_path):
    fake = tmp_path / "bin" / "icml26"
    fake.parent.mkdir()
    fake.write_text(FAKE)
    fake.chmod(0o755)
    return fake


def test_dry_runs_on_the_device_with_a_row_each_and_exit_1_when_one_fails(tmp_path):
    fake = fake_icml26(tmp_path)
    packages = sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())[:2]
    out = tmp_path / "out"
    proc = run("--device", "cpu", "--no-medium", out, 60, *packages, env={"ICML26": str(fake), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    calls = (fake.parent / "calls.txt").read_text().splitlines()
    assert calls == [f"run {p} --config paper --dry-run --device cpu" for p in packages]
    rows = [line.split("\t") for line in (out / "summary.tsv").read_text().splitlines()]
    assert rows[0] == ["paper", "step", "status", "seconds", "last line"]
    assert [r[:3] for r in rows[1:]] == [[p, "paper-dry-run", "ok"] for p in packages]
    assert (out / packages[0] / "paper-dry-run.log").read_text().startswith("ok: run ")
    assert (out / "platform.txt").is_file()


def test_a_failing_dry_run_is_its_exit_code_and_last_line_in_the_summary(tmp_path):
    fake = fake_icml26(tmp_path)
    slug = sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())[0]
    fake.write_text(FAKE.replace("bad-paper", slug))
    proc = run("--device", "cpu", tmp_path / "out", 60, slug, env={"ICML26": str(fake), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1
    row = (tmp_path / "out" / "summary.tsv").read_text().splitlines()[1].split("\t")
    assert row[2] == "exit 1" and row[4] == "missing corpus: expected at /data"


def test_what_cannot_start_in_time_is_listed_not_run(tmp_path):
    fake = fake_icml26(tmp_path)
    slug = sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())[0]
    proc = run("--device", "cpu", tmp_path / "out", 1, slug, env={"ICML26": str(fake), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and not (fake.parent / "calls.txt").exists()
    row = (tmp_path / "out" / "summary.tsv").read_text().splitlines()[1].split("\t")
    assert row[:3] == [slug, "paper-dry-run", "not run: time limit"]
