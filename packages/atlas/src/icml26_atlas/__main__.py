"""``icml26-atlas`` / ``python -m icml26_atlas``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("atlas")


if __name__ == "__main__":
    sys.exit(main())
