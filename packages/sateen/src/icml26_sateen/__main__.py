"""``icml26-sateen`` / ``python -m icml26_sateen``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("sateen")


if __name__ == "__main__":
    sys.exit(main())
