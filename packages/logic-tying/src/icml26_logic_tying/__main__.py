"""``icml26-logic-tying`` / ``python -m icml26_logic_tying``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("logic-tying")


if __name__ == "__main__":
    sys.exit(main())
