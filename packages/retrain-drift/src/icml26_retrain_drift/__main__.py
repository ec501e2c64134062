"""``icml26-retrain-drift`` / ``python -m icml26_retrain_drift``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("retrain-drift")


if __name__ == "__main__":
    sys.exit(main())
