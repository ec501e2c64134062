"""The paper config can start: it builds, and its one step runs on CPU (or is skipped with the reason); data
this machine lacks is named, with its size."""

from icml26_ultralif.experiment import EXPERIMENT


def test_paper_dry_run():
    report = EXPERIMENT.dry_run("paper", "cpu")
    assert not report.error, "\n".join(report.lines())
    assert report.step.startswith(("ran on cpu", "skipped: ")), report.step
    assert all(m.size_bytes > 0 for m in report.missing)
