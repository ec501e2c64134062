"""The paper config can start: it builds, and its one step runs on CPU (or is skipped with the reason); its data
are generated, so nothing is missing."""

from icml26_recap.experiment import EXPERIMENT
from icml26_shared.testing import check_paper_dry_run


def test_paper_dry_run():
    check_paper_dry_run(EXPERIMENT)
