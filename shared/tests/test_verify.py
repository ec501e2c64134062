"""``icml26 verify``: re-runs compared claim by claim with a reference; and the results-root rules."""

import json
import math
from pathlib import Path

import pytest
from icml26_shared.cli import describe_config, main
from icml26_shared.papers import catalogue, installed
from icml26_shared.records import environment
from icml26_shared.runner import Outcome, Progress
from icml26_shared.verify import ClaimCheck, tolerance

REPO = Path(__file__).resolve().parents[2]


def _reference(tmp: Path, slug: str = "alpha") -> Path:
    assert main(["run", slug, "--config", "smoke", "--out", "results"]) == 0
    return tmp / "results" / slug / "results.json"


def test_verify_reproduces_a_deterministic_paper(fake_papers, capsys):
    _reference(fake_papers.parent)
    capsys.readouterr()
    assert main(["verify", "alpha", "--config", "smoke", "--out", "scratch"]) == 0
    out = capsys.readouterr().out
    assert "platform: " in out and "1 reproduced (of 1 paper)" in out
    row = next(line for line in out.splitlines() if line.startswith("alpha"))
    assert row.split()[1:4] == ["reproduced", "1", "0"]
    summary = json.loads((fake_papers.parent / "scratch" / "verify.json").read_text())
    assert summary["papers"][0]["checks"][0]["reproduced"] is True and "cpu_model" in summary["platform"]
    assert summary["jobs"] == 1 and set(summary["papers"][0]["timing"]) == {"cpu_seconds", "load_start", "load_end"}
    # committed under results/reproduce/, the summary is REPORT's "Whole reproductions" column
    (fake_papers.parent / "results" / "reproduce").mkdir()
    (fake_papers.parent / "results" / "reproduce" / "cold.json").write_text(json.dumps(summary))
    assert main(["report", "--out", "results"]) == 0
    report = (fake_papers.parent / "results" / "REPORT.md").read_text()
    section = report.split("## Whole reproductions", 1)[1]
    assert "| paper | `cold` |" in section and "| whole run | smoke, 1 at a time: " in section
    row = next(line for line in section.splitlines() if line.startswith("| [`alpha`]"))
    wall, cpu = summary["papers"][0]["wall_seconds"], summary["papers"][0]["timing"]["cpu_seconds"]
    assert row.startswith(f"| [`alpha`](#alpha) | reproduced, {wall:.0f} / {cpu:.0f} (")
    (fake_papers.parent / "results" / "reproduce" / "broken.json").write_text("{not json")
    assert main(["report", "--out", "results"]) == 0  # reported in its column, never a crash
    section = (fake_papers.parent / "results" / "REPORT.md").read_text().split("## Whole reproductions", 1)[1]
    assert "| paper | `broken` | `cold` |" in section and "| whole run | unreadable: " in section


def test_verify_reports_a_moved_mean_and_a_flipped_verdict(fake_papers, capsys):
    path = _reference(fake_papers.parent)
    data = json.loads(path.read_text())
    data["claims"][0]["verdict"] = "fails"
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["verify", "alpha", "--config", "smoke", "--out", "scratch"]) == 1
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("alpha"))
    assert "differs" in row and "fails -> holds" in row


def test_verify_without_a_usable_reference_and_with_a_failing_run(fake_papers, monkeypatch, capsys):
    _reference(fake_papers.parent, "alpha")
    (fake_papers.parent / "results" / "alpha" / "results.json").write_text("{corrupt")
    monkeypatch.setenv("FAKE_PAPER_CRASH", "beta")
    capsys.readouterr()
    assert main(["verify", "alpha", "beta", "--config", "smoke", "--out", "scratch"]) == 1
    out = capsys.readouterr().out
    alpha = next(line for line in out.splitlines() if line.startswith("alpha"))
    beta = next(line for line in out.splitlines() if line.startswith("beta"))
    assert "no reference" in alpha and "unreadable results.json" in alpha
    assert "failed" in beta and "1 no reference, 1 failed" in out


def test_verify_into_the_reference_itself_compares_with_the_old_records(fake_papers, capsys):
    path = _reference(fake_papers.parent)
    data = json.loads(path.read_text())
    data["claims"][0]["verdict"] = "fails"
    path.write_text(json.dumps(data))
    assert main(["verify", "alpha", "--config", "smoke", "--out", "results"]) == 1  # old record was read first
    assert json.loads(path.read_text())["claims"][0]["verdict"] == "holds"  # and then rewritten


def test_verify_bad_input(fake_papers, capsys):
    assert main(["verify", "gamma"]) == 2
    err = capsys.readouterr().err
    assert "paper='gamma'" in err and "'alpha', 'beta'" in err
    assert main(["verify", "alpha", "--config", "huge"]) == 2
    assert "config='huge'" in capsys.readouterr().err
    assert main(["verify"]) == 2


def test_tolerance_is_exact_without_spread_and_two_sems_with_it():
    assert tolerance({"mean": 5.0, "sem": 0.0}, {"mean": 5.0, "sem": 0.0}) == pytest.approx(5e-9)
    assert tolerance({"mean": 0.0, "sem": 0.1}, {"mean": 0.0, "sem": 0.3}) == pytest.approx(0.6)
    same = ClaimCheck("c", "holds", "holds", 1.0, 1.0 + 4e-9, 1e-9)
    assert not same.reproduced and "mean 1 -> 1" in same.describe()
    assert ClaimCheck("c", "inconclusive", "inconclusive", math.nan, math.nan, 1e-9).reproduced


def test_runs_default_to_the_user_results_root_not_the_working_directory(fake_papers, monkeypatch, capsys):
    monkeypatch.setenv("ICML26_RESULTS", str(fake_papers.parent / "user-results"))
    assert main(["run", "alpha", "--config", "smoke"]) == 0
    assert (fake_papers.parent / "user-results" / "alpha" / "results.json").is_file()
    assert not (fake_papers.parent / "results").exists()
    capsys.readouterr()
    assert main(["list"]) == 0
    assert "1/1 hold (smoke)" in capsys.readouterr().out


def test_out_that_is_a_file_is_one_clear_line_before_any_work(fake_papers, capsys):
    blocker = fake_papers.parent / "a-file"
    blocker.write_text("x")
    for argv in (["run", "alpha", "--out", str(blocker)], ["run", "alpha", "--out", str(blocker / "sub")]):
        assert main([*argv, "--config", "smoke"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--out=" in err and "not a directory" in err.lower()
    assert not list(fake_papers.parent.glob("**/calls.txt"))  # nothing was computed


def test_a_planned_or_uninstalled_paper_says_which_it_is(fake_papers, capsys):
    papers, here = catalogue(), installed()
    planned = [s for s, p in papers.items() if p.status == "planned" and s not in here]
    available = [s for s, p in papers.items() if p.status == "available" and s not in here]
    if planned:
        assert main(["run", planned[0]]) == 2
        assert "is planned: it has no package yet" in capsys.readouterr().err
    if available:
        assert main(["run", available[0]]) == 2
        err = capsys.readouterr().err
        assert f"`make {available[0]}`" in err and f"after a release, `pip install icml26-{available[0]}`" in err
    assert planned or available


@pytest.mark.skipif(not (REPO / "packages").is_dir(), reason="runs inside the repository only")
def test_catalogue_status_matches_the_packages_folder():
    papers = catalogue()
    assert len(papers) == 38 and sorted(p.number for p in papers.values()) == list(range(1, 39))
    with_package = {p.name for p in (REPO / "packages").iterdir() if (p / "pyproject.toml").is_file()}
    assert {s for s, p in papers.items() if p.status == "available"} == with_package


def test_configs_summarise_long_lists():
    assert describe_config({"seeds": list(range(500)), "lr": 0.1}) == "seeds=0..499 (500 values), lr=0.1"
    assert describe_config({"xs": [0.5] * 9}) == "xs=[0.5, 0.5, ..., 0.5] (9 values)"
    assert describe_config({"seeds": [0, 1, 2]}) == "seeds=[0, 1, 2]"


def test_progress_lines_name_the_running_papers(capsys):
    tracker = Progress(2, force=True)
    tracker.track("alpha", lambda: Outcome("alpha", "ran", 1, 1, 3.0))
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[0/2 done") and "alpha started; running: alpha" in err[0]
    assert "[1/2 done" in err[1] and "alpha ran in 3 s; running: -" in err[1]
    piped = Progress(2)  # pytest's stderr is no terminal: the end line only
    piped.track("beta", lambda: Outcome("beta", "failed", wall_seconds=2.0))
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "[1/2 done" in err[0] and "beta failed in 2 s" in err[0]


def test_environment_names_the_machine():
    env = environment()
    assert env["cpu_model"] and env["cpu_count"] >= 1 and isinstance(env["thread_variables"], dict)
