"""``icml26-fuse`` / ``python -m icml26_fuse``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("fuse")


if __name__ == "__main__":
    sys.exit(main())
