"""Graphs for zero-shot anomaly detection: real PyGOD graphs and graphs built from scikit-learn data.

* ``Graph``: node features ``x`` (n, f), undirected ``edge_index`` (2, m) holding both directions, and
  optional 0/1 anomaly labels ``y`` (n,) used for evaluation only, never for training.
* ``pygod_graph``: the PyGOD benchmark graphs (inj_cora, inj_amazon, reddit, books, disney, enron,
  gen_1000), fetched with their checksum through ``icml26_shared.fetch``; the torch_geometric pickle is
  opened only after verification and converted once into arrays by ``cached``.
* ``sklearn_graph``: a k-nearest-neighbour graph over a scikit-learn bundled data set (no download) with
  anomalies injected by the DOMINANT protocol (``inject_anomalies``); ``sbm_graph``: a stochastic block
  model with class-conditional Gaussian features (spec section 5).
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from importlib import resources

import numpy as np
from icml26_shared import (
    cache_dir,
    cached,
    check_array,
    check_choice,
    check_int,
    check_open_interval,
    fail,
    fetch,
)
from icml26_shared.datasets import manifest
from icml26_shared.records import Missing, find_data

PYGOD_NAMES = ("inj_cora", "inj_amazon", "reddit", "books", "disney", "enron", "gen_1000")
SKLEARN_NAMES = ("digits", "breast_cancer", "wine", "iris")
KNN = 10  # spec section 5: k-NN graphs with k = 10
CLIQUE_SIZE = 10  # DOMINANT protocol: cliques of 10-15 nodes
CONTEXT_CANDIDATES = 50  # DOMINANT protocol: farthest of k = 50 random nodes


@dataclass(frozen=True, eq=False)
class Graph:
    """An attributed undirected graph; ``y`` (0 normal / 1 anomalous) is for evaluation only.

    ``edge_index`` may list an edge in one or both directions, or several times: it is stored as the
    simple graph (both directions once, self loops dropped, as ``undirected``), so scores never depend
    on how the edge list was written.
    """

    x: np.ndarray  # (n, f) float32 node features
    edge_index: np.ndarray  # (2, m) int64; stored symmetrised and deduplicated, without self loops
    y: np.ndarray | None = None  # (n,) int64 in {0, 1}
    name: str = "graph"

    def __post_init__(self) -> None:
        x = check_array("x", self.x, ndim=2).astype(np.float32)
        n = x.shape[0]
        edge_index = np.asarray(self.edge_index)
        if edge_index.ndim != 2 or edge_index.shape[0] != 2 or not np.issubdtype(edge_index.dtype, np.integer):
            raise fail("edge_index", edge_index, "an integer array of shape (2, m)")
        if edge_index.size and (edge_index.min() < 0 or edge_index.max() >= n):
            raise fail("edge_index", edge_index, f"node ids in [0, {n}) (x has {n} rows)")
        object.__setattr__(self, "x", x)
        # any edge list (one direction, duplicates) becomes the simple undirected graph it describes
        object.__setattr__(self, "edge_index", undirected(edge_index.astype(np.int64), n))
        if self.y is not None:
            y = check_array("y", self.y, ndim=1)
            if len(y) != n or not np.isin(y, (0, 1)).all():
                raise fail("y", y, f"{n} labels in {{0, 1}}, one per row of x")
            object.__setattr__(self, "y", y.astype(np.int64))

    @property
    def num_nodes(self) -> int:
        return self.x.shape[0]


def undirected(edge_index: np.ndarray, n: int) -> np.ndarray:
    """Both directions of every edge, without self loops or duplicates: (2, m) -> (2, m')."""
    e = np.concatenate([edge_index, edge_index[::-1]], axis=1)
    e = e[:, e[0] != e[1]]
    keys = np.unique(e[0].astype(np.int64) * n + e[1])
    return np.stack([keys // n, keys % n])


def knn_edges(x: np.ndarray, k: int = KNN) -> np.ndarray:
    """Symmetrised k-nearest-neighbour graph (Euclidean) over the rows of x: (n, f) -> (2, m)."""
    from sklearn.neighbors import NearestNeighbors

    k = check_int("k", k, 1, len(x) - 1)
    _, idx = NearestNeighbors(n_neighbors=k + 1).fit(x).kneighbors(x)
    src = np.repeat(np.arange(len(x)), k)
    return undirected(np.stack([src, idx[:, 1:].ravel()]), len(x))


def inject_anomalies(
    x: np.ndarray,
    edge_index: np.ndarray,
    n_contextual: int,
    n_cliques: int,
    rng: np.random.Generator,
    clique_size: int = CLIQUE_SIZE,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DOMINANT injection (Ding et al. 2019), reimplemented: returns (x', edge_index', y).

    Structural: ``n_cliques`` disjoint groups of ``clique_size`` random nodes are fully connected.
    Contextual: each of ``n_contextual`` other random nodes takes the features of the farthest (Euclidean)
    of ``CONTEXT_CANDIDATES`` random nodes.
    """
    n = len(x)
    n_contextual, n_cliques = check_int("n_contextual", n_contextual, 0), check_int("n_cliques", n_cliques, 0)
    clique_size = check_int("clique_size", clique_size, 2)
    if n_contextual + n_cliques * clique_size > n:
        raise fail("n_contextual", n_contextual, f"with {n_cliques} cliques of {clique_size} at most {n} nodes")
    picked = rng.permutation(n)[: n_contextual + n_cliques * clique_size]
    y = np.zeros(n, dtype=np.int64)
    y[picked] = 1
    x = x.copy()
    for v in picked[:n_contextual]:
        candidates = rng.choice(n, size=min(CONTEXT_CANDIDATES, n), replace=False)
        x[v] = x[candidates[np.argmax(((x[candidates] - x[v]) ** 2).sum(1))]]
    cliques = picked[n_contextual:].reshape(n_cliques, clique_size) if n_cliques else np.empty((0, clique_size))
    extra = [np.array(np.meshgrid(c, c)).reshape(2, -1) for c in cliques.astype(np.int64)]
    edge_index = undirected(np.concatenate([edge_index, *extra], axis=1), n)
    return x, edge_index, y


def sklearn_graph(
    name: str, rng: np.random.Generator, classes: tuple[int, ...] | None = None, anomaly_rate: float = 0.05
) -> Graph:
    """k-NN graph over a scikit-learn bundled data set (standardised features) with injected anomalies.

    Half of ``anomaly_rate`` are contextual nodes, half sit in cliques of ``CLIQUE_SIZE`` (at least one).
    """
    import sklearn.datasets

    check_choice("name", name, SKLEARN_NAMES)
    anomaly_rate = check_open_interval("anomaly_rate", anomaly_rate, 0.0, 0.5)
    bunch = getattr(sklearn.datasets, f"load_{name}")()
    keep = np.isin(bunch.target, classes) if classes is not None else np.ones(len(bunch.target), bool)
    if not keep.any():
        raise fail("classes", classes, f"class labels present in {name} ({sorted(set(bunch.target))})")
    x = bunch.data[keep].astype(np.float64)
    x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
    n_anomalies = anomaly_rate * len(x)
    n_cliques = max(1, round(n_anomalies / 2 / CLIQUE_SIZE))
    x, edge_index, y = inject_anomalies(x, knn_edges(x), round(n_anomalies / 2), n_cliques, rng)
    suffix = "" if classes is None else "_" + "".join(map(str, classes))
    return Graph(x, edge_index, y, name=f"{name}{suffix}")


def sbm_graph(
    n: int, blocks: int, p_in: float, p_out: float, dim: int, rng: np.random.Generator, anomaly_rate: float = 0.05
) -> Graph:
    """Stochastic block model with features N(mu_block, I), mu_block ~ N(0, 4 I), plus injected anomalies."""
    n, blocks, dim = check_int("n", n, 2), check_int("blocks", blocks, 1, n), check_int("dim", dim, 1)
    p_in, p_out = check_open_interval("p_in", p_in, 0, 1), check_open_interval("p_out", p_out, 0, 1)
    anomaly_rate = check_open_interval("anomaly_rate", anomaly_rate, 0.0, 0.5)
    labels = rng.integers(0, blocks, size=n)
    prob = np.where(labels[:, None] == labels[None, :], p_in, p_out)
    upper = np.triu(rng.random((n, n)) < prob, k=1)
    edge_index = undirected(np.stack(np.nonzero(upper)), n)
    x = rng.normal(0.0, 2.0, size=(blocks, dim))[labels] + rng.normal(size=(n, dim))
    n_anomalies = anomaly_rate * n
    n_cliques = max(1, round(n_anomalies / 2 / CLIQUE_SIZE))
    x, edge_index, y = inject_anomalies(x, edge_index, round(n_anomalies / 2), n_cliques, rng)
    return Graph(x, edge_index, y, name=f"sbm{blocks}")


def _manifest() -> dict[str, tuple[str, str]]:
    """Graph name -> (sha256, url), from the rows of the data MANIFEST shipped with the package."""
    text = resources.files(__package__).joinpath("pygod.tsv").read_text()
    rows = csv.reader(text.splitlines(), delimiter="\t")
    return {row[0].split("/")[-1].removesuffix(".pt.zip"): (row[1], row[2]) for row in rows}


def _pygod_arrays(name: str, sha256: str, url: str) -> dict[str, np.ndarray]:
    """Verified zip -> the torch_geometric ``Data`` pickle inside -> plain arrays x, edge_index, y."""
    import torch

    path = fetch(url, sha256, subdir="promos/pygod")  # raises ChecksumError before anything is unpickled
    with zipfile.ZipFile(path) as archive:
        payload = archive.read(f"{name}.pt")
    data = torch.load(io.BytesIO(payload), weights_only=False)  # trusted: the file's sha256 was just verified
    x = data.x.numpy().astype(np.float32)
    return {
        "x": x,
        "edge_index": undirected(data.edge_index.numpy().astype(np.int64), len(x)),
        "y": (data.y.numpy().astype(np.int64) > 0).astype(np.int64),  # inj_*: 1 contextual, 2 structural, 3 both
    }


def pygod_missing(names: tuple[str, ...]) -> tuple[Missing, ...]:
    """The PyGOD graphs among ``names`` that ``pygod_graph`` would have to download: neither its zip in the
    cache (where ``fetch`` puts it) nor ``pygod/<name>.pt.zip`` under the data mirror; with their sizes."""
    missing = []
    for name in (n for n in names if n in PYGOD_NAMES):
        url = _manifest()[name][1]
        cache_zip = cache_dir() / "promos" / "pygod" / f"{name}.pt.zip"
        if cache_zip.is_file() or find_data(f"pygod/{name}.pt.zip") is not None:
            continue
        size = manifest()[f"pygod/{name}.pt.zip"][1]  # the shared data manifest lists each zip's bytes
        missing.append(Missing(f"PyGOD graph {name}", f"{cache_zip} or $ICML26_DATA_MIRROR/pygod/", url, size))
    return tuple(missing)


def pygod_graph(name: str) -> Graph:
    """A PyGOD benchmark graph with its binary outlier labels (``y > 0``)."""
    check_choice("name", name, PYGOD_NAMES)
    sha256, url = _manifest()[name]
    arrays = cached(f"promos/pygod/{name}-{sha256[:16]}", lambda: _pygod_arrays(name, sha256, url))
    return Graph(arrays["x"], arrays["edge_index"], arrays["y"], name=name)
