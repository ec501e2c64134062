"""``icml26-dprsc`` / ``python -m icml26_dprsc``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("dprsc")


if __name__ == "__main__":
    sys.exit(main())
