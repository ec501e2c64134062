import os

import pytest
import torch
from hypothesis import settings

# derandomize: the same examples on every run, so CI cannot flake on a new draw
settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never ask a hub
torch.set_num_threads(1)  # small matrices: a second thread only spins on a shared machine


@pytest.fixture(scope="session")
def text():
    from icml26_do_prompt import TextTower

    return TextTower()


@pytest.fixture(scope="session")
def clip(text):
    """The real text tower with an untrained (seeded) image tower: enough for shapes, paths and gradients."""
    from icml26_do_prompt import FrozenCLIP, ImageTower

    torch.manual_seed(0)
    return FrozenCLIP(text, ImageTower(embed_dim=text.width))
