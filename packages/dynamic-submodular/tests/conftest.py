"""Small shared instances for the tests."""

import numpy as np
import pytest
from icml26_dynamic_submodular import Coverage, FacilityLocation, random_set_system


@pytest.fixture
def coverage():
    return Coverage(random_set_system(14, 30, 4.0, np.random.default_rng(0)))


@pytest.fixture
def facility():
    x = np.random.default_rng(1).normal(size=(16, 2))
    return FacilityLocation(np.exp(-((x[:, None] - x[None]) ** 2).sum(-1)))
