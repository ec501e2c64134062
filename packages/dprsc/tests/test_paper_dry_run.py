"""The paper config can start: it builds, and its one step runs on CPU (or is skipped with the reason); data
not yet cached is named with its URL (a run downloads it)."""

from icml26_dprsc.experiment import EXPERIMENT
from icml26_shared.testing import check_paper_dry_run


def test_paper_dry_run():
    report = check_paper_dry_run(EXPERIMENT, data_may_be_missing=True)
    assert all(m.source.startswith("https://") for m in report.missing)
