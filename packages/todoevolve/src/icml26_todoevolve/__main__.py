"""``icml26-todoevolve`` / ``python -m icml26_todoevolve``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("todoevolve")


if __name__ == "__main__":
    sys.exit(main())
