"""``icml26-sinkhorn-te`` / ``python -m icml26_sinkhorn_te``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("sinkhorn-te")


if __name__ == "__main__":
    sys.exit(main())
