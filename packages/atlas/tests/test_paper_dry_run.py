"""The paper config can start: it builds, and its one step runs on CPU (or is skipped with the reason)."""

from icml26_atlas.experiment import EXPERIMENT
from icml26_shared.testing import check_paper_dry_run


def test_paper_dry_run():
    check_paper_dry_run(EXPERIMENT)


def test_the_dry_run_step_itself_runs_at_smoke_size():
    """The paper step is over the CPU limits here, so the same step runs once on the smoke model."""
    report = EXPERIMENT.dry_run("smoke", "cpu")
    assert report.ok and report.step.startswith("ran on cpu"), "\n".join(report.lines())
