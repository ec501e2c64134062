"""``icml26-ai-engrams`` / ``python -m icml26_ai_engrams``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("ai-engrams")


if __name__ == "__main__":
    sys.exit(main())
