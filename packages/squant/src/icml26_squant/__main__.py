"""``icml26-squant`` / ``python -m icml26_squant``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("squant")


if __name__ == "__main__":
    sys.exit(main())
