from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    ratio = ns["value"] / ns["omniscient_optimum"](ns["W"])[0]
    # seeded, but k-means and the LP go through BLAS/HiGHS: a margin well outside their float noise
    assert abs(ratio - 0.728) < 0.02 and ns["clusters"].b.shape == (10,)
