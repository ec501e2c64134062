"""``icml26-adaeraser`` / ``python -m icml26_adaeraser``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("adaeraser")


if __name__ == "__main__":
    sys.exit(main())
