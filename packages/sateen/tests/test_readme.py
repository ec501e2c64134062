from pathlib import Path

import torch
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_runs_and_prints_what_it_says():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    assert ns["logits"].shape == torch.Size([64, 10])
    adapter = ns["adapter"]
    assert adapter.reliable_fraction == 0.0 and not adapter.subspace.fitted and adapter.seen == 0  # after reset()
