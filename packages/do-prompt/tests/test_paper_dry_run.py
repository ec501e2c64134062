"""The paper config can start: it builds, and its one Do-Prompt step runs on CPU (or is skipped with the reason);
Fashion-MNIST, where this machine lacks it, is named with its size."""

from icml26_do_prompt.experiment import EXPERIMENT
from icml26_shared.testing import check_paper_dry_run


def test_paper_dry_run():
    check_paper_dry_run(EXPERIMENT, data_may_be_missing=True)
