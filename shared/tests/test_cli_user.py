"""What a user of the ``icml26`` command meets with bad paths, Ctrl-C and ``--help`` (issue 26, items 5-10
and 13): one line naming the argument and the path, never a traceback; nothing lost; no folders left behind."""

import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from icml26_shared.cli import main
from icml26_shared.verify import Verification

PROC = Path("/proc/self").is_dir()  # /proc refuses new folders even to root
needs_proc = pytest.mark.skipif(not PROC, reason="no /proc on this system")


LOG_LINE = re.compile(r"\d\d:\d\d:\d\d (DEBUG|INFO|WARNING|ERROR) ")
PROGRESS_LINE = re.compile(r"\[\d+/\d+ done, |\d+ to run \(\d+ up to date\)")  # reproduce's and verify's


def one_line(err: str) -> str:
    """The one line a command writes to stderr besides its log records and progress lines (no traceback),
    as its error."""
    lines = [line for line in err.splitlines() if not (LOG_LINE.match(line) or PROGRESS_LINE.match(line))]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(autouse=True)
def _log_to_this_tests_stderr():
    """``configure_logging`` binds its handler to the stderr of the first call; pytest swaps stderr per test."""
    yield
    root = logging.getLogger("icml26")
    for handler in [h for h in root.handlers if getattr(h, "_icml26", False)]:
        root.removeHandler(handler)


@pytest.fixture
def blocker(fake_papers):
    """A regular file: no folder can be made under it, not even by root."""
    path = fake_papers.parent / "a-file"
    path.write_text("x")
    return path


@pytest.mark.parametrize("command", [["run", "alpha"], ["verify", "alpha"], ["reproduce", "alpha"]])
@pytest.mark.parametrize("under", ["a-file", pytest.param("/proc", marks=needs_proc)])
def test_out_that_cannot_be_created_is_one_line_naming_the_flag(fake_papers, blocker, capsys, command, under):
    (fake_papers.parent / "results").mkdir()  # verify's reference folder
    out = str(Path(under if under == "/proc" else blocker) / "x" / "y")
    assert main([*command, "--config", "smoke", "--out", out]) == 2
    captured = capsys.readouterr()
    assert f"--out={out!r}: expected a directory this user can write to" in one_line(captured.err)
    assert captured.out == "" and not list(fake_papers.parent.glob("**/calls.txt"))  # nothing ran


@needs_proc
def test_out_that_exists_but_refuses_files_is_one_line(fake_papers, capsys):
    assert main(["run", "alpha", "--config", "smoke", "--out", "/proc"]) == 2
    assert "--out='/proc': expected a directory this user can write to (writing a file in /proc" in one_line(
        capsys.readouterr().err
    )


def test_out_errors_are_one_line_from_the_installed_command_too(fake_papers, blocker):
    """The same through a real process (the console script's path), whoever runs it, root included."""
    cmd = [sys.executable, "-m", "icml26_shared", "run", "alpha", "--config", "smoke", "--out", str(blocker / "x")]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "--out=" in one_line(proc.stderr) and "Not a directory" in proc.stderr


def test_results_variable_that_is_a_file_is_named_in_the_error(fake_papers, blocker, monkeypatch, capsys):
    monkeypatch.setenv("ICML26_RESULTS", str(blocker))
    for argv in (["run", "alpha", "--config", "smoke"], ["list"], ["report"]):
        assert main(argv) == 2
        err = one_line(capsys.readouterr().err)
        assert f"ICML26_RESULTS={str(blocker)!r}: expected" in err and "--out" not in err


def test_run_interrupted_is_one_line_exit_130_and_keeps_earlier_results(fake_papers, monkeypatch, capsys):
    assert main(["run", "alpha", "--config", "smoke", "--out", "res"]) == 0
    folder = fake_papers.parent / "res" / "alpha"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    monkeypatch.setenv("FAKE_PAPER_INTERRUPT", "alpha")
    capsys.readouterr()
    assert main(["run", "alpha", "--config", "smoke", "--out", "res"]) == 130
    assert "icml26: interrupted" in one_line(capsys.readouterr().err)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # byte-identical, no temp files


def _wait_for(path: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written within {timeout} s")


def test_ctrl_c_during_verify_stops_the_paper_process_and_removes_the_scratch_folder(fake_papers, tmp_path):
    """SIGINT to the ``icml26`` process alone (as ``kill -INT`` sends it): its paper process stops too."""
    assert main(["run", "alpha", "--config", "smoke", "--out", "results"]) == 0  # the reference
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    started = tmp_path / "started.pid"
    env = {**os.environ, "FAKE_PAPER_SLOW": "alpha", "FAKE_PAPER_STARTED": str(started), "TMPDIR": str(tmp)}
    cmd = [sys.executable, "-m", "icml26_shared", "verify", "alpha", "--config", "smoke"]
    # A shell without job control starts background jobs (CI runners among them) with SIGINT ignored, and a child
    # keeps that: give the command the default disposition a terminal's Ctrl-C meets.
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )
    try:
        child = int(_wait_for(started))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "icml26: interrupted" in one_line(err)
    assert "verify: 1 paper," in out
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the paper process is gone, not orphaned
    assert not list(tmp.iterdir())  # no scratch folder left


def test_verify_finds_no_reference_folder_before_running_and_names_the_flag(fake_papers, capsys):
    assert main(["verify", "alpha", "--config", "smoke"]) == 2  # no ./results here
    captured = capsys.readouterr()
    err = one_line(captured.err)
    assert "--reference='results': expected a folder of committed results" in err and "pass --reference" in err
    assert captured.out == "" and not list(fake_papers.parent.glob("**/calls.txt"))


@pytest.fixture
def scratch_tmp(fake_papers, tmp_path, monkeypatch):
    """The folder where verify's scratch folders go, empty at the start."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    assert main(["run", "alpha", "--config", "smoke", "--out", "results"]) == 0  # the reference
    return tmp


def test_verify_checks_its_arguments_before_printing_or_creating_anything(scratch_tmp, capsys):
    capsys.readouterr()
    assert main(["verify", "alpha", "--config", "smoke", "--jobs", "0"]) == 2
    captured = capsys.readouterr()
    assert "--jobs=0: expected an integer in [1, inf]" in one_line(captured.err)
    assert captured.out == "" and not list(scratch_tmp.iterdir())


def test_verify_removes_its_scratch_folder_on_success_unless_kept(scratch_tmp, monkeypatch, capsys):
    def every_claim_reproduced(slugs, config, out, reference, jobs, verbose):  # the runs, end to end: test_verify
        (out / "run.log").write_text("ran")
        return [Verification(s, "reproduced") for s in slugs]

    monkeypatch.setattr("icml26_shared.verify.verify", every_claim_reproduced)
    capsys.readouterr()
    assert main(["verify", "alpha", "--config", "smoke"]) == 0
    assert "removed (--keep keeps it)" in capsys.readouterr().out and not list(scratch_tmp.iterdir())
    assert main(["verify", "alpha", "--config", "smoke", "--keep"]) == 0
    (kept,) = scratch_tmp.iterdir()
    assert f"in {kept} (verify.json)" in capsys.readouterr().out
    assert (kept / "run.log").is_file() and (kept / "verify.json").is_file()


def test_verify_keeps_the_scratch_folder_of_a_failure_and_names_the_reference_flag(scratch_tmp, capsys):
    capsys.readouterr()
    assert main(["verify", "beta", "--config", "smoke"]) == 1  # results/ has alpha only
    (kept,) = scratch_tmp.iterdir()
    out = capsys.readouterr().out
    assert f"in {kept} (verify.json)" in out and (kept / "beta" / "results.json").is_file()
    assert "no reference for beta in " in out and "pass --reference" in out


def test_list_and_report_refuse_a_path_that_is_not_a_results_folder(fake_papers, blocker, capsys):
    missing = fake_papers.parent / "nowhere" / "dir"
    for argv, expected in [
        (["list", "--out", str(missing)], "an existing results folder (it does not exist)"),
        (["list", "--out", str(blocker)], "a results folder (it is a file)"),
        (["report", "--out", str(missing)], "an existing results folder (it does not exist)"),
        (["report", "--out", str(fake_papers)], "a results folder with <slug>/results.json inside (found none)"),
    ]:
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert f"--out={argv[-1]!r}: expected {expected}" in one_line(captured.err) and captured.out == ""
    assert not missing.parent.exists() and not (fake_papers / "REPORT.md").exists()


def test_list_before_anything_ran_says_so(fake_papers, capsys):
    assert main(["list"]) == 0  # $ICML26_RESULTS names a folder that does not exist yet
    out = capsys.readouterr().out
    assert "(nothing run yet)" in out and "no results" in out


def test_help_names_every_argument_and_its_default(fake_papers, capsys):
    texts = {}
    for command in ("list", "run", "reproduce", "verify", "report"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        texts[command] = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "slugs the papers, by slug" in texts["reproduce"] and "slugs the papers, by slug" in texts["verify"]
    assert "slug the paper, by slug" in texts["run"]
    assert (
        "papers at once (default: 1)" in texts["verify"]
        and "(default: results, relative to the current" in (texts["verify"])
    )
    assert "(default: quick)" in texts["run"] and "(default: 60)" in texts["reproduce"]
    assert "icml26_shared" not in texts["verify"]
    assert "Write <out>/REPORT.md from every <out>/<slug>/results.json." in texts["report"]


def test_list_aligns_its_columns_and_counts_papers_in_the_singular(fake_papers, capsys):
    assert main(["run", "alpha", "--config", "smoke"]) == 0
    (fake_papers.parent / "results" / "beta").mkdir()
    (fake_papers.parent / "results" / "beta" / "results.json").write_text("{bad")
    capsys.readouterr()
    assert main(["list"]) == 0
    alpha, beta = capsys.readouterr().out.splitlines()[1:]
    assert "unreadable results.json" in beta and alpha.index("Fake alpha") == beta.index("Fake beta")
    assert main(["report"]) == 0
    assert ": 2 papers; unreadable results: beta" in capsys.readouterr().out
    assert main(["reproduce", "alpha", "--config", "smoke"]) == 0
    assert "1 of 1 paper ok" in capsys.readouterr().out
