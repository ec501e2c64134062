"""``icml26-cen-autofocus`` / ``python -m icml26_cen_autofocus``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("cen-autofocus")


if __name__ == "__main__":
    sys.exit(main())
