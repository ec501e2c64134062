"""``icml26-emotion-sae`` / ``python -m icml26_emotion_sae``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("emotion-sae")


if __name__ == "__main__":
    sys.exit(main())
