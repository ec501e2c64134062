"""``icml26-diffusion-geometry`` / ``python -m icml26_diffusion_geometry``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("diffusion-geometry")


if __name__ == "__main__":
    sys.exit(main())
