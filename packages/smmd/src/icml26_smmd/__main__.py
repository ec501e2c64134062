"""``icml26-smmd`` / ``python -m icml26_smmd``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("smmd")


if __name__ == "__main__":
    sys.exit(main())
