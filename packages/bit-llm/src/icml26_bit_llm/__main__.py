"""``icml26-bit-llm`` / ``python -m icml26_bit_llm``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("bit-llm")


if __name__ == "__main__":
    sys.exit(main())
