"""``icml26-fremia`` / ``python -m icml26_fremia``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("fremia")


if __name__ == "__main__":
    sys.exit(main())
