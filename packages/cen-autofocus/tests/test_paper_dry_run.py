"""The paper config can start: it builds, and its one step runs on CPU (or is skipped with the reason)."""

from icml26_cen_autofocus.experiment import EXPERIMENT


def test_paper_dry_run():
    report = EXPERIMENT.dry_run("paper", "cpu")
    assert report.ok, "\n".join(report.lines())
    assert report.step.startswith(("ran on cpu", "skipped: ")), report.step
