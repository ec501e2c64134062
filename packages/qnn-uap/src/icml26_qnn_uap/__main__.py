"""``icml26-qnn-uap`` / ``python -m icml26_qnn_uap``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("qnn-uap")


if __name__ == "__main__":
    sys.exit(main())
