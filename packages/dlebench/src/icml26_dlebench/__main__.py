"""``icml26-dlebench`` / ``python -m icml26_dlebench``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("dlebench")


if __name__ == "__main__":
    sys.exit(main())
