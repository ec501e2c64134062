"""The paper config can start: it builds, and its one step runs on CPU (or is skipped with the reason); data
this machine lacks is named, with its size."""

from icml26_ai_engrams.experiment import EXPERIMENT
from icml26_shared.testing import check_paper_dry_run


def test_paper_dry_run():
    check_paper_dry_run(EXPERIMENT, data_may_be_missing=True)


def test_the_dry_run_step_itself_runs_at_smoke_size():
    """The paper step is over the CPU limits here, so the same step runs once on the smoke model."""
    report = EXPERIMENT.dry_run("smoke", "cpu")
    assert not report.error and report.step.startswith("ran on cpu"), "\n".join(report.lines())
