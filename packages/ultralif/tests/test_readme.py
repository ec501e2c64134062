from pathlib import Path

from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert round(float(ns["soft_maxplus"](ns["a"], eps=0.1)), 4) == 1.2
    assert ns["spikes"].shape == (8, 64)
    result = ns["evaluate"](ns["model"], ns["X"], ns["y"], seed=1)
    # two epochs on random labels: the stated values with margins far outside cross-machine float noise
    assert abs(result.accuracy - 0.129) < 0.05 and abs(result.spike_rate - 0.520) < 0.05
    assert abs(ns["model"].temperatures()[0] - 0.996) < 0.01
