"""``icml26-diffusion-info`` / ``python -m icml26_diffusion_info``: this paper's command."""

import sys

from icml26_shared.cli import paper_main


def main() -> int:
    return paper_main("diffusion-info")


if __name__ == "__main__":
    sys.exit(main())
