"""Single-threaded torch for the whole test session: the tests run many tiny batched 3x3 operations."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    torch.set_num_threads(1)
    yield
