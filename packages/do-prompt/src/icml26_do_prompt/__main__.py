"""``icml26-do-prompt`` / ``python -m icml26_do_prompt``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("do-prompt")


if __name__ == "__main__":
    sys.exit(main())
