"""Molecules as MolGAN graphs and the QM9 metrics (validity, uniqueness, novelty) with RDKit.

A molecule of at most N heavy atoms is a node-type vector (N,) over ``ATOMS`` (0 = no atom) and a symmetric
bond-type matrix (N, N) over ``BONDS`` (0 = no bond); aromatic rings are kekulised ([INF] ours: MolGAN also
has an aromatic channel). Metrics follow MolGAN (De Cao & Kipf 2018): valid = RDKit sanitises the graph into
one connected molecule; uniqueness = distinct valid / valid; novelty = valid not in the training set / valid.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_int
from rdkit import Chem, RDLogger

ATOMS = (None, "C", "N", "O", "F")
BONDS = (None, Chem.BondType.SINGLE, Chem.BondType.DOUBLE, Chem.BondType.TRIPLE)
MAX_ATOMS = 9  # QM9: at most nine heavy atoms

RDLogger.DisableLog("rdApp.*")  # invalid generated graphs are expected; RDKit would print one line for each


def encode(smiles: str, max_atoms: int = MAX_ATOMS) -> tuple[np.ndarray, np.ndarray] | None:
    """Node types (N,) and bond types (N, N) of a SMILES string, or None if it cannot be represented."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() > max_atoms:
        return None
    Chem.Kekulize(mol, clearAromaticFlags=True)
    nodes = np.zeros(max_atoms, dtype=int)
    edges = np.zeros((max_atoms, max_atoms), dtype=int)
    for atom in mol.GetAtoms():
        if atom.GetSymbol() not in ATOMS or atom.GetFormalCharge() != 0:
            return None
        nodes[atom.GetIdx()] = ATOMS.index(atom.GetSymbol())
    for bond in mol.GetBonds():
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        edges[i, j] = edges[j, i] = BONDS.index(bond.GetBondType())
    return nodes, edges


def decode(nodes: np.ndarray, edges: np.ndarray) -> str | None:
    """Canonical SMILES of a graph, or None when it is not one valid, connected molecule (MolGAN's strict rule)."""
    mol = Chem.RWMol()
    index = {}
    for i, t in enumerate(nodes):
        if t > 0:
            index[i] = mol.AddAtom(Chem.Atom(ATOMS[int(t)]))
    for i in index:
        for j in index:
            if i < j and edges[i, j] > 0:
                mol.AddBond(index[i], index[j], BONDS[int(edges[i, j])])
    try:
        Chem.SanitizeMol(mol)
        smiles = Chem.MolToSmiles(mol)
    except (ValueError, RuntimeError):  # RDKit's sanitisation errors (valence, kekulisation)
        return None
    return smiles if smiles and "." not in smiles and "*" not in smiles else None


def one_hot_dataset(smiles: list[str], max_atoms: int = MAX_ATOMS) -> tuple[np.ndarray, np.ndarray, set[str]]:
    """One-hot nodes (M, N, T), edges (M, N, N, Y) and the canonical SMILES set of the representable molecules."""
    check_int("max_atoms", max_atoms, 1)
    graphs = [g for g in map(encode, smiles) if g is not None]
    nodes = np.stack([g[0] for g in graphs])
    edges = np.stack([g[1] for g in graphs])
    canonical = {decode(n, e) for n, e in zip(nodes, edges, strict=True)} - {None}
    return np.eye(len(ATOMS))[nodes], np.eye(len(BONDS))[edges], canonical


def molecule_metrics(nodes: np.ndarray, edges: np.ndarray, training: set[str]) -> dict[str, float]:
    """Validity, uniqueness, novelty and their product (valid, unique and novel) of generated graphs."""
    nodes = check_array("nodes", nodes, ndim=2)
    edges = check_array("edges", edges, ndim=3)
    smiles = [decode(n, e) for n, e in zip(nodes, edges, strict=True)]
    valid = [s for s in smiles if s is not None]
    validity = len(valid) / len(smiles)
    uniqueness = len(set(valid)) / len(valid) if valid else 0.0
    novelty = sum(s not in training for s in valid) / len(valid) if valid else 0.0
    return {
        "validity": validity,
        "uniqueness": uniqueness,
        "novelty": novelty,
        "valid_unique_novel": validity * uniqueness * novelty,
    }
