import json
import subprocess
import sys

import pytest
from icml26_shared.cli import main, paper_main
from icml26_shared.records import Record


def test_list_reads_metadata_only(fake_papers):
    code = (
        "import sys; from icml26_shared.cli import main; main(['list']);"
        "assert not {'torch', 'jax', 'fake_alpha'} & set(sys.modules), sorted(sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "alpha" in out and "beta" in out and "Fake alpha" in out and "no results" in out


def test_run_writes_results_and_prints_verdicts(fake_papers, capsys):
    assert main(["run", "alpha", "--config", "smoke", "--out", "res"]) == 0
    record = Record.load(fake_papers.parent / "res" / "alpha" / "results.json")
    assert record.config_name == "smoke" and record.version == "0.3.0" and record.holding == 1
    assert "holds" in capsys.readouterr().out
    main(["list", "--out", "res"])
    assert "1/1 hold (smoke)" in capsys.readouterr().out


def test_unknown_paper_and_config_list_the_known_ones(fake_papers, capsys):
    assert main(["run", "gamma"]) == 2
    err = capsys.readouterr().err
    assert "paper='gamma': expected one of the installed papers [" in err and "'alpha', 'beta'" in err
    assert main(["run", "alpha", "--config", "huge"]) == 2
    assert "config='huge': expected one of ['medium', 'paper', 'quick', 'smoke']" in capsys.readouterr().err
    assert main(["reproduce", "alpha", "gamma"]) == 2
    assert "paper='gamma'" in capsys.readouterr().err
    assert main(["reproduce"]) == 2
    assert "expected slugs or --all" in capsys.readouterr().err


def test_reproduce_local_isolates_failures_and_skips_up_to_date(fake_papers, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_PAPER_CRASH", "beta")
    assert main(["reproduce", "alpha", "beta", "--config", "smoke", "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert (
        "alpha" in out
        and "failed" in out
        and "boom in beta" in (fake_papers.parent / "results/beta/run.log").read_text()
    )
    assert (fake_papers.parent / "results/alpha/results.json").is_file()
    monkeypatch.delenv("FAKE_PAPER_CRASH")
    assert main(["reproduce", "alpha", "beta", "--config", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "skipped" in out and "ran" in out  # alpha was up to date, beta ran
    calls = fake_papers.parent / "results/alpha/calls.txt"
    assert calls.read_text() == "x"
    assert main(["reproduce", "alpha", "--config", "smoke", "--force"]) == 0
    assert calls.read_text() == "xx"
    assert main(["reproduce", "alpha", "--config", "quick"]) == 0  # another config is not up to date
    assert calls.read_text() == "xxx"


def test_reproduce_with_submitit_local_executor(fake_papers, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_PAPER_CRASH", "beta")
    code = main(
        ["reproduce", "alpha", "beta", "--config", "smoke", "--executor", "slurm", "--submitit-cluster", "local"]
    )
    out = capsys.readouterr().out
    assert code == 1 and "boom in beta" in out
    assert Record.load(fake_papers.parent / "results/alpha/results.json").holding == 1


def test_report_survives_a_corrupted_record(fake_papers, capsys):
    main(["run", "alpha", "--config", "smoke"])
    main(["run", "beta", "--config", "paper"])
    paper = fake_papers.parent / "results" / "beta" / "paper" / "results.json"  # the ladder's own folder
    data = json.loads(paper.read_text())
    assert data["claims"][0]["verdict"] == "fails"  # the paper config shifts the score below zero
    (paper.parent.parent / "results.json").write_text("{truncated")  # a quick record cut short
    assert main(["report"]) == 0
    assert "unreadable results: beta" in capsys.readouterr().out
    report = (fake_papers.parent / "results" / "REPORT.md").read_text()
    assert "| [`alpha`](#alpha) | 1/1 (smoke) |" in report
    assert "| `beta` | unreadable" in report
    assert "The score is positive." in report


def test_report_updates_the_readme_catalogue(fake_papers, capsys):
    main(["run", "alpha", "--config", "smoke"])
    readme = fake_papers.parent / "README.md"
    readme.write_text(
        "intro\n<!-- catalogue:start -->\n| # | paper | title | status |\n|---|---|---|---|\n"
        "| 1 | [`alpha`](packages/alpha) | Alpha | planned |\n| 2 | `gamma` | G | planned |\n"
        "<!-- catalogue:end -->\nend\n"
    )
    assert main(["report", "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert "| 1 | [`alpha`](packages/alpha) | Alpha | 1/1 claims hold (smoke) |" in text
    assert "| 2 | `gamma` | G | planned |" in text and text.endswith("end\n")
    readme.write_text("no markers")
    assert main(["report", "--readme", str(readme)]) == 2
    assert "catalogue:start" in capsys.readouterr().err


def test_paper_command(fake_papers, capsys):
    assert paper_main("alpha", ["claims"]) == 0
    assert "rule: mean(score) > 0" in capsys.readouterr().out
    assert paper_main("alpha", ["configs"]) == 0
    assert "smoke: seeds=[0, 1], shift=0.0" in capsys.readouterr().out
    assert paper_main("alpha", ["run", "--config", "smoke", "--out", "o"]) == 0
    assert paper_main("alpha", ["run", "--config", "nope"]) == 2


@pytest.mark.parametrize("argv", [["reproduce", "alpha", "--jobs", "0"], ["reproduce", "alpha", "--timeout-min", "0"]])
def test_reproduce_bad_numbers(fake_papers, argv, capsys):
    assert main(argv) == 2
    assert f"{argv[-2]}=0: expected an integer" in capsys.readouterr().err


def test_medium_writes_beside_quick_and_the_report_sets_them_side_by_side(fake_papers, capsys):
    assert main(["run", "alpha", "--config", "quick", "--out", "res"]) == 0
    assert main(["run", "alpha", "--config", "medium", "--out", "res"]) == 0
    res = fake_papers.parent / "res"
    quick, medium = Record.load(res / "alpha/results.json"), Record.load(res / "alpha/medium/results.json")
    assert (quick.config_name, medium.config_name, len(medium.seeds)) == ("quick", "medium", 5)
    assert set(medium.timing) == {"cpu_seconds", "load_start", "load_end"} and medium.timing["cpu_seconds"] >= 0
    main(["list", "--out", "res"])
    assert "1/1 hold (quick); 1/1 hold (medium)" in capsys.readouterr().out
    assert main(["report", "--out", "res"]) == 0
    report = (res / "REPORT.md").read_text()
    assert "| [`alpha`](#alpha) | 1/1 | " in report
    row = next(line for line in report.splitlines() if line.startswith("| positive |"))
    # medium shifts the score up: toward the rule's side of `> 0`, verdict unchanged
    assert row.endswith(
        "| 1.01 ± 0.005774 (n=3) | **holds** | 2.02 ± 0.007071 (n=5) | **holds** | toward the rule |"
    ), row


def test_medium_for_a_paper_without_one(fake_papers, monkeypatch, capsys):
    import icml26_shared.cli as cli

    every = cli.installed()  # only the fakes with --all, even in an environment with the real papers installed
    monkeypatch.setattr(cli, "installed", lambda: {k: v for k, v in every.items() if k in ("alpha", "beta")})
    assert main(["run", "beta", "--config", "medium"]) == 2
    assert "config='medium': expected one of ['paper', 'quick', 'smoke'] for paper 'beta'" in capsys.readouterr().err
    assert main(["verify", "beta", "--config", "medium"]) == 2
    assert main(["reproduce", "--all", "--config", "medium", "--out", "res"]) == 0
    captured = capsys.readouterr()
    assert "no 'medium' config, left out: " in captured.err and "beta" in captured.err.split("left out: ")[1]
    assert (fake_papers.parent / "res/alpha/medium/results.json").is_file()
    assert not (fake_papers.parent / "res/beta").exists()


def test_reproduce_states_the_expected_time_and_a_line_per_paper_when_piped(fake_papers, capsys):
    main(["run", "alpha", "--config", "smoke", "--out", "res"])
    assert main(["reproduce", "alpha", "beta", "--config", "smoke", "--out", "res", "--force"]) == 0
    err = capsys.readouterr().err
    assert (
        "2 to run (0 up to date), 1 at a time: expected ~0 min from the stored wall times (none stored for beta)" in err
    )
    assert "alpha ran in" in err and "beta ran in" in err
