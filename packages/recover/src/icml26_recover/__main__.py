"""``icml26-recover`` / ``python -m icml26_recover``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("recover")


if __name__ == "__main__":
    sys.exit(main())
