"""``icml26-ddpm-gmm`` / ``python -m icml26_ddpm_gmm``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("ddpm-gmm")


if __name__ == "__main__":
    sys.exit(main())
