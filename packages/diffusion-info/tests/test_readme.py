from pathlib import Path

from icml26_diffusion_info import fraction_before
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")  # exact scores, seeded Monte Carlo
    profile, times = ns["profile"], ns["times"]
    assert (round(profile.neural_entropy), round(profile.mutual_information, 2)) == (73, 1.34)
    assert round(fraction_before(times, profile.entropy_rate, 0.1), 2) == 0.46
    assert round(fraction_before(times, profile.mi_rate, 0.1), 3) == 0.0
