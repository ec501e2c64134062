"""``icml26-online-matching`` / ``python -m icml26_online_matching``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("online-matching")


if __name__ == "__main__":
    sys.exit(main())
