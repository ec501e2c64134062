"""``icml26-atr`` / ``python -m icml26_atr``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("atr")


if __name__ == "__main__":
    sys.exit(main())
