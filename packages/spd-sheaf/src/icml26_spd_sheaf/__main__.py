"""``icml26-spd-sheaf`` / ``python -m icml26_spd_sheaf``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("spd-sheaf")


if __name__ == "__main__":
    sys.exit(main())
