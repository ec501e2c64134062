"""``icml26-pencil`` / ``python -m icml26_pencil``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("pencil")


if __name__ == "__main__":
    sys.exit(main())
