from pathlib import Path

from icml26_adaeraser import psnr
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    out, scenes = ns["out"], ns["scenes"]
    assert psnr(out.image, scenes.background, scenes.mask).shape == (4,)
    assert len(out.trace) == 12 and out.trace[0][:2] == (0, 0)  # 6 suppressed steps x 2 layers
