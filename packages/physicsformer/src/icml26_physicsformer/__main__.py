"""``icml26-physicsformer`` / ``python -m icml26_physicsformer``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("physicsformer")


if __name__ == "__main__":
    sys.exit(main())
