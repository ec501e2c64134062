"""``icml26-whispersplat`` / ``python -m icml26_whispersplat``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("whispersplat")


if __name__ == "__main__":
    sys.exit(main())
