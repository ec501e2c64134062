"""Data: graph validation, the DOMINANT injection protocol, scikit-learn graphs and PyGOD loading."""

import numpy as np
import pytest
from icml26_promos import Graph, inject_anomalies, pygod_graph, sbm_graph, sklearn_graph
from icml26_promos.data import knn_edges, undirected


def test_undirected_symmetric_without_loops_or_duplicates():
    e = undirected(np.array([[0, 1, 1, 2, 2], [1, 0, 1, 0, 0]]), 3)
    pairs = set(map(tuple, e.T))
    assert pairs == {(0, 1), (1, 0), (0, 2), (2, 0)} and e.shape[1] == len(pairs)


def test_knn_edges_symmetric_and_min_degree():
    x = np.random.default_rng(0).normal(size=(50, 3))
    e = knn_edges(x, k=4)
    assert set(map(tuple, e.T)) == set(map(tuple, e[::-1].T))
    assert np.bincount(e[0], minlength=50).min() >= 4


def test_injection_protocol():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 4))
    x2, e2, y = inject_anomalies(x, knn_edges(x), n_contextual=5, n_cliques=2, rng=rng, clique_size=10)
    assert y.sum() == 25
    changed = np.nonzero((x2 != x).any(1))[0]
    assert len(changed) <= 5 and set(changed) <= set(np.nonzero(y)[0])
    pairs = set(map(tuple, e2.T))
    clique_nodes = [v for v in np.nonzero(y)[0] if v not in changed]
    degree_inside = [sum((u, v) in pairs for u in clique_nodes) for v in clique_nodes]
    assert len(clique_nodes) == 20 and min(degree_inside) >= 9  # two cliques of 10: 9 clique neighbours each


def test_injection_too_many_anomalies():
    x = np.zeros((20, 2))
    with pytest.raises(ValueError, match="n_contextual"):
        inject_anomalies(x, np.zeros((2, 0), np.int64), 15, 1, np.random.default_rng(0))


def test_sklearn_and_sbm_graphs():
    rng = np.random.default_rng(0)
    g = sklearn_graph("wine", rng)
    assert g.x.shape == (178, 13) and 0 < g.y.sum() < 30 and g.name == "wine"
    s = sbm_graph(80, 2, 0.2, 0.01, 5, rng)
    assert s.x.shape == (80, 5) and s.y.sum() > 0
    with pytest.raises(ValueError, match="name"):
        sklearn_graph("mnist", rng)
    with pytest.raises(ValueError, match="classes"):
        sklearn_graph("iris", rng, classes=(7,))


def test_pygod_graph_loads_through_verified_cache():
    g = pygod_graph("disney")
    assert g.x.shape == (124, 28) and g.y.sum() == 6
    assert set(map(tuple, g.edge_index.T)) == set(map(tuple, g.edge_index[::-1].T))
    with pytest.raises(ValueError, match="name"):
        pygod_graph("cora")


def test_pygod_checksum_mismatch_is_refused(tmp_path, monkeypatch):
    from icml26_promos import data
    from icml26_shared import ChecksumError

    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    _, url = data._manifest()["disney"]
    monkeypatch.setattr(data, "_manifest", lambda: {"disney": ("0" * 64, url)})
    (tmp_path / "promos" / "pygod").mkdir(parents=True)
    (tmp_path / "promos" / "pygod" / "disney.pt.zip").write_bytes(b"not the file")
    monkeypatch.delenv("ICML26_DATA_MIRROR", raising=False)
    monkeypatch.setattr("urllib.request.urlopen", lambda *a, **k: __import__("io").BytesIO(b"tampered"))
    with pytest.raises(ChecksumError):
        pygod_graph("disney")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"x": np.array([[np.nan, 1.0]]), "edge_index": np.zeros((2, 0), np.int64)}, "x="),
        ({"x": np.zeros((0, 2)), "edge_index": np.zeros((2, 0), np.int64)}, "x="),
        ({"x": np.zeros((3, 2)), "edge_index": np.array([[0, 5], [5, 0]])}, "edge_index"),
        ({"x": np.zeros((3, 2)), "edge_index": np.array([0, 1, 2])}, "edge_index"),
        ({"x": np.zeros((3, 2)), "edge_index": np.zeros((2, 0), np.int64), "y": np.array([0, 1])}, "y="),
        ({"x": np.zeros((2, 2)), "edge_index": np.zeros((2, 0), np.int64), "y": np.array([0, 2])}, "y="),
    ],
)
def test_graph_bad_inputs(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Graph(**kwargs)
