"""Data: checksum-verified MoleculeNet loading, RDKit featurisation, scaffold split, synthetic neighbourhoods."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_shared import ChecksumError, fetch
from icml26_spd_sheaf.data import (
    NUM_ATOM_FEATURES,
    _manifest,
    canonical_frame,
    molecule_graph,
    point_neighbourhoods,
    read_moleculenet,
    scaffold_split,
)


def test_freesolv_rows_and_labels():
    smiles, labels = read_moleculenet("freesolv")
    assert len(smiles) == 642 and labels.shape == (642, 1) and np.isfinite(labels).all()
    few, few_labels = read_moleculenet("tox21", limit=50)
    assert len(few) == 50 and few_labels.shape == (50, 12) and np.isnan(few_labels).any()  # missing labels kept


def test_a_wrong_checksum_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    sha, url = _manifest()["SAMPL.csv"]
    with pytest.raises((ChecksumError, OSError)):
        fetch(url, "0" * 64, subdir="moleculenet")
    assert fetch(url, sha, subdir="moleculenet").is_file()


def test_molecule_graph_of_ethanol():
    x, edges, directions, embedded = molecule_graph("CCO", seed=0)
    assert x.shape == (3, NUM_ATOM_FEATURES) and edges.shape == (2, 4) and embedded
    np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(directions[0], -directions[1], rtol=1e-5)  # (u->v) and (v->u) are opposite
    again = molecule_graph("CCO", seed=0)
    np.testing.assert_array_equal(directions, again[2])  # seeded ETKDG is reproducible


def test_unparsable_smiles_give_none():
    assert molecule_graph("C1CC(", seed=0) is None
    assert molecule_graph("", seed=0) is None


@settings(deadline=None)
@given(st.integers(0, 10_000))
def test_canonical_frame_removes_rotations(seed):
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(7, 3)) * np.array([3.0, 2.0, 1.0])
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    np.testing.assert_allclose(canonical_frame(points @ rotation.T), canonical_frame(points), atol=1e-6)


def test_scaffold_split_partitions_and_keeps_scaffolds_together():
    smiles, _ = read_moleculenet("freesolv", limit=120)
    train, valid, test = scaffold_split(smiles)
    assert sorted(train + valid + test) == list(range(len(smiles)))
    assert len(train) >= len(valid) and len(train) >= len(test)
    with pytest.raises(ValueError, match="fractions="):
        scaffold_split(smiles, (0.5, 0.5, 0.5))


def test_point_neighbourhoods_are_balanced_star_graphs():
    graphs = point_neighbourhoods(10, neighbours=6, seed=1)
    assert sum(int(g.y) for g in graphs) == 5
    g = graphs[1]
    assert g.num_nodes == 7 and g.edge_index.shape == (2, 12)
    torch.testing.assert_close(g.direction.norm(dim=-1), torch.ones(12))
    # planar neighbourhood: the smallest eigenvalue of the direction scatter is small
    leaves = g.direction[:6]
    assert torch.linalg.eigvalsh(leaves.T @ leaves)[0] < 0.5


def test_loaders_reject_bad_arguments():
    with pytest.raises(ValueError, match="name="):
        read_moleculenet("muv")
    with pytest.raises(ValueError, match="limit="):
        read_moleculenet("freesolv", limit=0)
    with pytest.raises(ValueError, match="num="):
        point_neighbourhoods(1)


def test_unparsable_molecules_are_skipped_and_counted(tmp_path, monkeypatch):
    from icml26_spd_sheaf import data

    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    rows = (["CCO", "C1CC(", "c1ccccc1O"], np.array([[1.0], [2.0], [3.0]]))
    monkeypatch.setattr(data, "read_moleculenet", lambda name, limit=None: rows)
    molecules = data.load_molecules("freesolv")
    assert molecules.skipped == 1 and molecules.smiles == ["CCO", "c1ccccc1O"]
    assert [float(g.y) for g in molecules.graphs] == [1.0, 3.0] and molecules.graphs[1].num_nodes == 7
