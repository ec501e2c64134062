"""``icml26-recap`` / ``python -m icml26_recap``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("recap")


if __name__ == "__main__":
    sys.exit(main())
