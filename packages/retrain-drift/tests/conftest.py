"""Shared small grid for the tests: 128 cells on [-9, 9], 40 geometric time steps up to T = 8."""

import pytest
from icml26_retrain_drift import grid_density, make_grid, time_grid


@pytest.fixture(scope="session")
def setup():
    x = make_grid(9.0, 128)
    t = time_grid(8.0, 40, 1e-3)
    return x, t, grid_density(x)
