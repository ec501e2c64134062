"""Public data sets used by several papers, fetched through the checksum-verified cache.

``data_manifest.tsv`` lists every file's public URL (a raw file at a pinned commit), sha256 and size;
``fetch_file(path)`` gets one of them (mirror first, then the URL). Loaders that several packages share
live here once; a package-specific view of the data (features, splits) stays in the package.
"""

from __future__ import annotations

import csv
import functools
import pickle
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

import numpy as np

from .cache import cached, fetch
from .validation import check_choice, fail

PLANETOID = ("cora", "citeseer")


@functools.lru_cache(maxsize=1)
def manifest() -> dict[str, tuple[str, int, str]]:
    """path -> (sha256, bytes, source_url) for every file of the data manifest."""
    text = resources.files(__package__).joinpath("data_manifest.tsv").read_text()
    rows = csv.DictReader(text.splitlines(), delimiter="\t")
    return {r["path"]: (r["sha256"], int(r["bytes"]), r["source_url"]) for r in rows}


def fetch_file(path: str) -> Path:
    """A verified local copy of the manifest file ``path`` (e.g. ``"planetoid/ind.cora.x"``)."""
    rows = manifest()
    if path not in rows:
        folders = sorted({p.split("/")[0] for p in rows})
        raise fail("path", path, f"a file of the data manifest, under one of {folders}")
    sha256, _size, url = rows[path]
    parent = PurePosixPath(path).parent
    return fetch(url, sha256, filename=PurePosixPath(path).name, subdir=f"data/{parent}")


@dataclass(frozen=True)
class Planetoid:
    """A Planetoid citation graph: features (n, f) float32, labels (n,) int64 (-1: no label in the
    files), edges (m, 2) int64 undirected with u < v, self-loops and duplicates of the raw files removed."""

    features: np.ndarray
    labels: np.ndarray
    edges: np.ndarray

    @property
    def num_nodes(self) -> int:
        return len(self.labels)


def _planetoid_arrays(name: str) -> dict[str, np.ndarray]:
    parts = {}
    for part in ("allx", "ally", "tx", "ty", "graph"):
        with open(fetch_file(f"planetoid/ind.{name}.{part}"), "rb") as fh:  # verified by fetch before unpickling
            parts[part] = pickle.load(fh, encoding="latin1")  # scipy.sparse / numpy / dict of lists
    test_index = np.loadtxt(fetch_file(f"planetoid/ind.{name}.test.index"), dtype=np.int64)
    adjacency = parts["graph"]
    n = max(len(adjacency), int(test_index.max()) + 1)
    features = np.zeros((n, parts["allx"].shape[1]), dtype=np.float32)
    labels = np.full(n, -1, dtype=np.int64)
    n_train = parts["allx"].shape[0]
    features[:n_train] = parts["allx"].toarray()
    labels[:n_train] = np.asarray(parts["ally"]).argmax(1)
    features[test_index] = parts["tx"].toarray()  # CiteSeer has isolated test ids without features
    ty = np.asarray(parts["ty"])
    labels[test_index] = np.where(ty.any(1), ty.argmax(1), -1)
    edges = {(min(u, v), max(u, v)) for u, nbrs in adjacency.items() for v in nbrs if u != v}
    return {"features": features, "labels": labels, "edges": np.array(sorted(edges), dtype=np.int64)}


def load_planetoid(name: str) -> Planetoid:
    """Cora or CiteSeer from the Planetoid files (Yang et al. 2016), decoded once and cached.

    The raw files are pickles of scipy matrices: they are unpickled only after their checksum is
    verified, which needs scipy installed (every package that reads them declares it).
    """
    check_choice("name", name, PLANETOID)
    arrays = cached(f"shared/planetoid-{name}-v1", lambda: _planetoid_arrays(name))
    return Planetoid(arrays["features"], arrays["labels"], arrays["edges"])
