"""``icml26-v2v-ccm`` / ``python -m icml26_v2v_ccm``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("v2v-ccm")


if __name__ == "__main__":
    sys.exit(main())
