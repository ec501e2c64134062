"""Small attributed graphs shared by the tests."""

import networkx as nx
import numpy as np
import pytest


def attributed_graph(n: int = 40, p: float = 0.25, d: int = 1, U: int = 8, seed: int = 0):
    """A G(n, p) graph with uniform integer attributes in [0, U)^d."""
    G = nx.gnp_random_graph(n, p, seed=seed)
    X = np.random.default_rng(seed).integers(0, U, size=(n, d))
    return G, X


@pytest.fixture
def small():
    return attributed_graph()
