"""Datasets: MoleculeNet CSVs with RDKit 3-D conformers, scaffold splits, and synthetic 3-D point neighbourhoods.

MoleculeNet files are fetched through ``icml26_shared.fetch`` with the public URL and sha256 listed in
``moleculenet.tsv`` (rows of the shared data MANIFEST), so the local mirror and a user's download
take the same checksum-verified path. Featurised molecules (atom features, bonds, ETKDG conformer
bond directions) are stored once per dataset and conformer seed with ``icml26_shared.cached``.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources

import numpy as np
import torch
from icml26_shared import Missing, cache_dir, cached, check_choice, check_int, fail, fetch, fingerprint, get_logger
from icml26_shared.records import find_data
from torch_geometric.data import Data

log = get_logger("spd-sheaf.data")

TOX21_TASKS = tuple(
    "NR-AR NR-AR-LBD NR-AhR NR-Aromatase NR-ER NR-ER-LBD NR-PPAR-gamma SR-ARE SR-ATAD5 SR-HSE SR-MMP SR-p53".split()
)
# name -> (file, SMILES column, label columns, task); the seven MoleculeNet sets of the paper + Lipophilicity
DATASETS = {
    "esol": ("delaney-processed.csv", "smiles", ("measured log solubility in mols per litre",), "regression"),
    "freesolv": ("SAMPL.csv", "smiles", ("expt",), "regression"),
    "lipophilicity": ("Lipophilicity.csv", "smiles", ("exp",), "regression"),
    "bbbp": ("BBBP.csv", "smiles", ("BBBP",), "classification"),
    "bace": ("bace.csv", "mol", ("Class",), "classification"),
    "clintox": ("clintox.csv", "smiles", ("FDA_APPROVED", "CT_TOX"), "classification"),
    "sider": ("sider.csv", "smiles", tuple(f"SIDER{i}" for i in range(1, 28)), "classification"),
    "tox21": ("tox21.csv", "smiles", TOX21_TASKS, "classification"),
}
ELEMENTS = (6, 7, 8, 9, 15, 16, 17, 35, 53)  # C N O F P S Cl Br I; anything else -> "other"
HYBRIDISATIONS = ("SP", "SP2", "SP3")


def _manifest() -> dict[str, tuple[str, str]]:
    """file name -> (sha256, public URL), from the embedded MANIFEST rows."""
    text = resources.files(__package__).joinpath("moleculenet.tsv").read_text()
    rows = (line.split("\t") for line in text.splitlines() if line.strip())
    return {name: (sha, url) for name, sha, _size, url in rows}


def moleculenet_missing(names) -> tuple[Missing, ...]:
    """The MoleculeNet sets among ``names`` whose CSV neither the cache (where ``read_moleculenet`` fetches it)
    nor ``moleculenet/<file>`` under the data mirror holds, with their download sizes."""
    text = resources.files(__package__).joinpath("moleculenet.tsv").read_text()
    sizes = {row[0]: int(row[2]) for row in (line.split("\t") for line in text.splitlines() if line.strip())}
    missing = []
    for name in dict.fromkeys(names):
        file = DATASETS[check_choice("names", name, DATASETS)][0]
        cached_csv = cache_dir() / "moleculenet" / file
        if not cached_csv.is_file() and find_data(f"moleculenet/{file}") is None:
            where = f"{cached_csv} or $ICML26_DATA_MIRROR/moleculenet/"
            missing.append(Missing(f"MoleculeNet {name} ({file})", where, _manifest()[file][1], sizes[file]))
    return tuple(missing)


def read_moleculenet(name: str, limit: int | None = None) -> tuple[list[str], np.ndarray]:
    """SMILES and labels (M, T) of a MoleculeNet set (NaN where a label is missing); ``limit`` evenly spaced rows."""
    check_choice("name", name, DATASETS)
    file, smiles_col, label_cols, _ = DATASETS[name]
    sha, url = _manifest()[file]
    path = fetch(url, sha, subdir="moleculenet")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if limit is not None and check_int("limit", limit, 1) < len(rows):  # evenly spaced rows: keeps the class mix
        rows = [rows[i] for i in np.linspace(0, len(rows) - 1, limit).round().astype(int)]
    labels = np.array([[float(r[c]) if r[c].strip() else np.nan for c in label_cols] for r in rows])
    return [r[smiles_col].strip() for r in rows], labels


def atom_features(atom) -> list[float]:
    """One-hot element, degree, formal charge, hydrogens, hybridisation; aromatic and ring flags (29 values)."""
    element = [float(atom.GetAtomicNum() == z) for z in ELEMENTS] + [float(atom.GetAtomicNum() not in ELEMENTS)]
    degree = [float(min(atom.GetDegree(), 5) == k) for k in range(6)]
    charge = [float(atom.GetFormalCharge() == c) for c in (-1, 0, 1)]
    hydrogens = [float(min(atom.GetTotalNumHs(), 4) == k) for k in range(5)]
    hybrid = [float(str(atom.GetHybridization()) == h) for h in HYBRIDISATIONS]
    return element + degree + charge + hydrogens + hybrid + [float(atom.GetIsAromatic()), float(atom.IsInRing())]


NUM_ATOM_FEATURES = 29
FEATURES_VERSION = 2  # bump when featurisation or row selection changes (part of the cache key)


def canonical_frame(positions: np.ndarray) -> np.ndarray:
    """Centre and rotate coordinates (A, 3) into their principal axes, signs fixed by the third moment.

    [INF, ours] the SPD readout and learned restriction maps are not rotation-equivariant, so every
    conformer is put in one canonical orientation.
    """
    centred = positions - positions.mean(0)
    _, vecs = np.linalg.eigh(centred.T @ centred)
    rotated = centred @ vecs[:, ::-1]
    signs = np.where(np.sum(rotated**3, axis=0) < 0, -1.0, 1.0)
    return rotated * signs


def molecule_graph(smiles: str, seed: int):
    """Parse and embed one molecule: atom features (A, 29), edges (2, E) both ways, unit bond directions (E, 3).

    Conformer: RDKit ETKDG with ``randomSeed`` on the molecule with hydrogens, which are then removed;
    when embedding fails the 2-D depiction coordinates (z = 0) are used. Returns None if RDKit cannot
    parse the SMILES. The direction of edge (u -> v) is ``(p_u - p_v) / ||p_u - p_v||``.
    """
    from rdkit import Chem, RDLogger
    from rdkit.Chem import AllChem

    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    with_h = Chem.AddHs(mol)
    params = AllChem.ETKDGv3()
    params.randomSeed = seed
    embedded = AllChem.EmbedMolecule(with_h, params) == 0
    if embedded:
        mol = Chem.RemoveHs(with_h)
        positions = mol.GetConformer().GetPositions()
    else:
        AllChem.Compute2DCoords(mol)
        positions = mol.GetConformer().GetPositions()
    positions = canonical_frame(positions)
    x = np.array([atom_features(a) for a in mol.GetAtoms()], dtype=np.float32)
    pairs = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    edges = np.array([p for u, v in pairs for p in ((u, v), (v, u))], dtype=np.int64).reshape(-1, 2).T
    vectors = positions[edges[0]] - positions[edges[1]]
    lengths = np.linalg.norm(vectors, axis=1, keepdims=True)
    if (lengths < 1e-6).any():  # coincident atoms in a failed 2-D depiction: no usable geometry
        return None
    return x, edges, (vectors / lengths).astype(np.float32), embedded


@dataclass
class MoleculeSet:
    """A featurised MoleculeNet set: graphs with labels, plus what could not be featurised."""

    name: str
    task: str
    graphs: list[Data]
    smiles: list[str]
    skipped: int  # molecules RDKit could not parse or place
    fallback_2d: int  # molecules without a 3-D embedding (2-D coordinates used)


def load_molecules(name: str, limit: int | None = None, conformer_seed: int = 0) -> MoleculeSet:
    """Featurise a MoleculeNet set (cached per name, limit and conformer seed); unparsable SMILES are skipped."""
    smiles, labels = read_moleculenet(name, limit)
    key = f"spd-sheaf/{name}-{fingerprint({'limit': limit, 'seed': conformer_seed, 'v': FEATURES_VERSION})}"

    def build() -> dict[str, np.ndarray]:
        parts = defaultdict(list)
        for i, s in enumerate(smiles):
            graph = molecule_graph(s, conformer_seed)
            if graph is None:
                continue
            x, edges, directions, embedded = graph
            for k, v in (("x", x), ("edges", edges.T), ("directions", directions)):
                parts[k].append(v)
            parts["meta"].append([i, len(x), edges.shape[1], int(embedded)])
        return {
            "x": np.concatenate(parts["x"]),
            "edges": np.concatenate(parts["edges"]).reshape(-1, 2).astype(np.int64),
            "directions": np.concatenate(parts["directions"]).reshape(-1, 3),
            "meta": np.array(parts["meta"], dtype=np.int64),
        }

    arrays = cached(key, build)
    meta = arrays["meta"]
    node_ptr = np.concatenate([[0], np.cumsum(meta[:, 1])])
    edge_ptr = np.concatenate([[0], np.cumsum(meta[:, 2])])
    graphs, kept = [], []
    for j, (i, *_rest) in enumerate(meta):
        e0, e1 = edge_ptr[j], edge_ptr[j + 1]
        graphs.append(
            Data(
                x=torch.from_numpy(arrays["x"][node_ptr[j] : node_ptr[j + 1]]),
                edge_index=torch.from_numpy(arrays["edges"][e0:e1].T.copy()),
                direction=torch.from_numpy(arrays["directions"][e0:e1]),
                y=torch.from_numpy(labels[i].astype(np.float32)).view(1, -1),
            )
        )
        kept.append(smiles[i])
    skipped = len(smiles) - len(meta)
    if skipped:
        log.warning("%s: skipped %d of %d molecules that RDKit could not parse or embed", name, skipped, len(smiles))
    return MoleculeSet(name, DATASETS[name][3], graphs, kept, skipped, int((meta[:, 3] == 0).sum()))


def scaffold_split(smiles: list[str], fractions=(0.8, 0.1, 0.1)) -> tuple[list[int], list[int], list[int]]:
    """Deterministic Bemis-Murcko scaffold split (MoleculeNet/DeepChem): largest scaffold groups go to train first."""
    from rdkit.Chem.Scaffolds import MurckoScaffold

    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) <= 0:
        raise fail("fractions", fractions, "three positive fractions summing to 1")
    groups: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(smiles):
        groups[MurckoScaffold.MurckoScaffoldSmiles(smiles=s, includeChirality=False)].append(i)
    ordered = sorted(groups.values(), key=lambda g: (len(g), g[0]), reverse=True)
    train, valid, test = [], [], []
    n = len(smiles)
    for group in ordered:
        if len(train) + len(group) <= fractions[0] * n:
            train += group
        elif len(valid) + len(group) <= fractions[1] * n:
            valid += group
        else:
            test += group
    return train, valid, test


def point_neighbourhoods(num: int, neighbours: int = 8, noise: float = 0.15, seed: int = 0) -> list[Data]:
    """Expressivity task: star graphs of a centre and ``neighbours`` 3-D points, randomly rotated.

    Label 1: neighbour directions near a random plane (normal component ~ N(0, noise)); label 0:
    uniform on the sphere. Radii ~ U(0.8, 1.2). Only second-order statistics of the directions (their
    covariance) separate the classes; ``x`` holds the positions relative to the centre (for GCN),
    ``direction`` the unit bond directions (for the sheaf models).
    """
    check_int("num", num, 2), check_int("neighbours", neighbours, 2)
    rng = np.random.default_rng(seed)
    graphs = []
    for i in range(num):
        label = i % 2
        d = rng.normal(size=(neighbours, 3))
        if label:
            d[:, 2] = noise * rng.normal(size=neighbours) * np.linalg.norm(d[:, :2], axis=1)
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        points = np.vstack([np.zeros(3), d @ rotation.T * rng.uniform(0.8, 1.2, size=(neighbours, 1))])
        leaves = np.arange(1, neighbours + 1)
        edges = np.concatenate(
            [np.stack([leaves, np.zeros_like(leaves)]), np.stack([np.zeros_like(leaves), leaves])], 1
        )
        vectors = points[edges[0]] - points[edges[1]]
        graphs.append(
            Data(
                x=torch.tensor(points, dtype=torch.float32),
                edge_index=torch.from_numpy(edges),
                direction=torch.tensor(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), dtype=torch.float32),
                y=torch.tensor([[float(label)]]),
            )
        )
    return graphs
