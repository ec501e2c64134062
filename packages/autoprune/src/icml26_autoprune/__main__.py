"""``icml26-autoprune`` / ``python -m icml26_autoprune``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("autoprune")


if __name__ == "__main__":
    sys.exit(main())
