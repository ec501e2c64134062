"""``icml26-zipmoe`` / ``python -m icml26_zipmoe``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("zipmoe")


if __name__ == "__main__":
    sys.exit(main())
