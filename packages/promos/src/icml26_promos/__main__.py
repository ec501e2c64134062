"""``icml26-promos`` / ``python -m icml26_promos``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("promos")


if __name__ == "__main__":
    sys.exit(main())
