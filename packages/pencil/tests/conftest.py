"""Small graphs shared by the tests."""

import networkx as nx
import pytest
from icml26_pencil import Graph


@pytest.fixture
def karate():
    G = nx.karate_club_graph()
    return G, Graph.from_networkx(G)
