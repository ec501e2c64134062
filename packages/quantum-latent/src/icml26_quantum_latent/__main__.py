"""``icml26-quantum-latent`` / ``python -m icml26_quantum_latent``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("quantum-latent")


if __name__ == "__main__":
    sys.exit(main())
