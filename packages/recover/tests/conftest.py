"""Shared fixtures: the DDPM schedule and the exact denoiser of one memorised image.

Hypothesis profiles come from the repository's conftest."""

import pytest
import torch
from icml26_recover import make_scheduler
from torch import nn

torch.set_num_threads(1)  # tiny models: threads only contend on the shared 2-core machine


class MemorisedDenoiser(nn.Module):
    """The exact optimal eps-predictor when the training set is the single image ``x_star``:
    eps(x_t, t) = (x_t - sqrt(abar_t) x*) / sqrt(1 - abar_t). The perfect memoriser, in closed form."""

    def __init__(self, scheduler, x_star: torch.Tensor):
        super().__init__()
        self.image_shape = tuple(x_star.shape)
        self.abar = scheduler.alphas_cumprod.float()
        self.x_star = x_star

    def forward(self, x, t):
        a = self.abar[t].view(-1, 1, 1, 1)
        return (x - a.sqrt() * self.x_star) / (1 - a).sqrt()


@pytest.fixture(scope="session")
def scheduler():
    return make_scheduler()


@pytest.fixture
def x_star():
    return torch.rand(1, 8, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1


@pytest.fixture
def memoriser(scheduler, x_star):
    return MemorisedDenoiser(scheduler, x_star)
