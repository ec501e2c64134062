"""``icml26-think-touch`` / ``python -m icml26_think_touch``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("think-touch")


if __name__ == "__main__":
    sys.exit(main())
