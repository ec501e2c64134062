"""``icml26-ultralif`` / ``python -m icml26_ultralif``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("ultralif")


if __name__ == "__main__":
    sys.exit(main())
