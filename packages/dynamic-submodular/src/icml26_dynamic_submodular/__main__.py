"""``icml26-dynamic-submodular`` / ``python -m icml26_dynamic_submodular``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("dynamic-submodular")


if __name__ == "__main__":
    sys.exit(main())
