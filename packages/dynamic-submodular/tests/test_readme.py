from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    alg = ns["alg"]  # integer-valued coverage, seeded stream: exact values
    assert (max(ns["changes"]), alg.bound, alg.value(), len(alg.solution)) == (8, 10, 223.0, 30)
