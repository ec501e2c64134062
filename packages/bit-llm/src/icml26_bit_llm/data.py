"""Generated stand-in for NSD: scenes from a compositional grammar, their captions, and synthetic fMRI.

[INF] (spec section 5, no NSD offline): a scene is (colour, shape, relation, colour, shape); its caption is
"a red circle left of a blue square", with the converse ("a blue square right of a red circle") as a second
reference. Attribute frequencies are Zipf-skewed, so a language model trained on the captions has a strong
prior (the mode "a red circle left of a red circle"). A shared "cortex" (the unit cube) holds one smooth
Gaussian activation bump per attribute value; a subject samples its own set of voxel coordinates (count,
order and a small jitter differ per subject) and sees the sum of the bumps of the scene's attributes plus
noise. Every array is generated from a seed; nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, check_number, check_positive, derive, fail

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange")
SHAPES = ("circle", "square", "triangle", "star", "heart", "cross")
RELATIONS = ("left of", "right of", "above", "below")
CONVERSE = {"left of": "right of", "right of": "left of", "above": "below", "below": "above"}
SLOTS = (COLOURS, SHAPES, RELATIONS, COLOURS, SHAPES)  # a scene: one index per slot
N_ATTRIBUTES = sum(len(s) for s in SLOTS)  # 28 attribute values, one cortical bump each
OFFSETS = np.cumsum([0, *(len(s) for s in SLOTS[:-1])])


def zipf_probabilities(n: int, exponent: float) -> np.ndarray:
    """p_k proportional to 1 / k^exponent, k = 1..n: the skew that makes the language prior strong."""
    check_int("n", n, 1)
    check_number("exponent", exponent)
    if exponent < 0:
        raise fail("exponent", exponent, "a number >= 0 (0 = uniform)")
    p = 1.0 / np.arange(1, n + 1) ** exponent
    return p / p.sum()


def sample_scenes(n: int, rng: np.random.Generator, exponent: float = 1.0) -> np.ndarray:
    """(n, 5) integer scenes, each slot drawn independently from its Zipf distribution."""
    check_int("n", n, 1)
    return np.stack([rng.choice(len(s), size=n, p=zipf_probabilities(len(s), exponent)) for s in SLOTS], axis=1)


def captions(scene: np.ndarray) -> list[str]:
    """The references of one scene: the caption and its converse (already lower-case, PTB-tokenised form)."""
    c1, s1, r, c2, s2 = (int(i) for i in scene)
    relation = RELATIONS[r]
    return [
        f"a {COLOURS[c1]} {SHAPES[s1]} {relation} a {COLOURS[c2]} {SHAPES[s2]}",
        f"a {COLOURS[c2]} {SHAPES[s2]} {CONVERSE[relation]} a {COLOURS[c1]} {SHAPES[s1]}",
    ]


def attribute_onehot(scenes: np.ndarray) -> np.ndarray:
    """(n, 28) multi-hot of the scene attributes (slot-specific): what drives the cortex."""
    scenes = check_array("scenes", scenes, ndim=2)
    if scenes.shape[1] != len(SLOTS):
        raise fail("scenes", scenes, f"an (n, {len(SLOTS)}) array of slot indices")
    out = np.zeros((len(scenes), N_ATTRIBUTES), dtype=np.float32)
    out[np.arange(len(scenes))[:, None], scenes + OFFSETS] = 1.0
    return out


@dataclass(frozen=True)
class Cortex:
    """The shared cortex: one Gaussian bump (centre in the unit cube, width, amplitude) per attribute value."""

    centres: np.ndarray  # (28, 3)
    widths: np.ndarray  # (28,)
    amplitudes: np.ndarray  # (28,)

    @classmethod
    def generate(cls, seed: int, width: float = 0.15) -> Cortex:
        rng = np.random.default_rng(derive(seed, "cortex"))
        check_positive("width", width)
        return cls(
            centres=rng.uniform(0.1, 0.9, size=(N_ATTRIBUTES, 3)),
            widths=width * rng.uniform(0.7, 1.3, size=N_ATTRIBUTES),
            amplitudes=rng.uniform(0.8, 1.2, size=N_ATTRIBUTES),
        )

    def response(self, coords: np.ndarray, scenes: np.ndarray) -> np.ndarray:
        """(n, N) noise-free activation of the N voxels at ``coords`` (N, 3) for ``scenes`` (n, 5)."""
        coords = check_voxel_coords(coords)
        d2 = ((coords[:, None, :] - self.centres[None]) ** 2).sum(-1)  # (N, 28)
        bumps = self.amplitudes * np.exp(-d2 / (2 * self.widths**2))  # (N, 28)
        return (attribute_onehot(scenes) @ bumps.T).astype(np.float32)


def check_voxel_coords(coords) -> np.ndarray:
    """Voxel coordinates: a finite (N, 3) array with N >= 1 (a subject with no voxels is refused)."""
    coords = np.asarray(coords, dtype=np.float32)
    if coords.ndim != 2 or coords.shape[1] != 3:
        raise fail("coords", coords, "an (N, 3) array of voxel coordinates")
    if coords.shape[0] == 0:
        raise fail("coords", coords, "at least one voxel (this subject has none)")
    return check_array("coords", coords, ndim=2)


@dataclass(frozen=True)
class Subject:
    """One subject's recording: its voxel coordinates (N, 3), fMRI (n, N), scenes (n, 5) and references."""

    name: str
    coords: np.ndarray
    fmri: np.ndarray
    scenes: np.ndarray

    def __post_init__(self) -> None:
        check_voxel_coords(self.coords)
        check_fmri(self.fmri, len(self.coords))
        if len(self.scenes) != len(self.fmri):
            raise fail("scenes", self.scenes, f"one scene per fMRI sample ({len(self.fmri)})")

    @property
    def references(self) -> list[list[str]]:
        return [captions(s) for s in self.scenes]


def check_fmri(fmri, n_voxels: int | None = None) -> np.ndarray:
    """A finite (n, N) array of voxel values, N matching the subject's coordinates when given."""
    arr = np.asarray(fmri, dtype=np.float32) if not hasattr(fmri, "detach") else fmri.detach().cpu().numpy()
    if arr.ndim != 2:
        raise fail("fmri", arr, f"an (n_samples, n_voxels) array, got ndim={arr.ndim}")
    arr = check_array("fmri", arr, ndim=2)
    if n_voxels is not None and arr.shape[1] != n_voxels:
        raise fail("fmri", arr, f"{n_voxels} voxel values per sample (one per coordinate)")
    return arr


def make_subject(
    name: str,
    cortex: Cortex,
    scenes: np.ndarray,
    seed: int,
    n_voxels: int,
    noise: float = 1.0,
    jitter: float = 0.02,
) -> Subject:
    """A subject: ``n_voxels`` coordinates sampled uniformly in the cube (own order, +jitter), fMRI = bumps + noise."""
    check_int("n_voxels", n_voxels, 1)
    check_number("noise", noise)
    check_number("jitter", jitter)
    rng = np.random.default_rng(derive(seed, "subject", name))
    coords = rng.uniform(0, 1, size=(n_voxels, 3))
    coords = coords + jitter * rng.standard_normal(coords.shape)
    signal = cortex.response(coords, scenes)
    fmri = signal + noise * rng.standard_normal(signal.shape).astype(np.float32)
    return Subject(name, coords.astype(np.float32), fmri.astype(np.float32), scenes)


@dataclass(frozen=True)
class Dataset:
    """Training subjects (S1..S{k-1}), the held-out subject S{k}, and the semantic targets of stage (i)."""

    train: tuple[Subject, ...]
    test: Subject
    semantic: np.ndarray  # (28, d_target) fixed random attribute embeddings: the stage-(i) "CLIP" target

    def target(self, scenes: np.ndarray) -> np.ndarray:
        """(n, d_target) unit-norm semantic vector of each scene (sum of its attribute embeddings)."""
        g = attribute_onehot(scenes) @ self.semantic
        return (g / np.linalg.norm(g, axis=1, keepdims=True)).astype(np.float32)


def make_dataset(
    seed: int,
    n_subjects: int = 5,
    n_train: int = 800,
    n_test: int = 300,
    voxels: tuple[int, int] = (400, 800),
    noise: float = 1.0,
    exponent: float = 1.0,
    d_target: int = 32,
) -> Dataset:
    """Subjects S1..S(n-1) for training and S(n) held out (as NSD's S1-7 / S8), scenes drawn independently.

    [INF] Scenes of the held-out subject come from the same distribution and may repeat training scenes (NSD's
    subjects share images); what is new is the subject: its voxel count, coordinates and order.
    """
    check_int("n_subjects", n_subjects, 2)
    check_int("n_train", n_train, 1)
    check_int("n_test", n_test, 1)
    low, high = (check_int("voxels", v, 1) for v in voxels)
    if low > high:
        raise fail("voxels", voxels, "a (low, high) range with low <= high")
    rng = np.random.default_rng(derive(seed, "scenes"))
    cortex = Cortex.generate(seed)
    counts = rng.integers(low, high + 1, size=n_subjects)
    subjects = [
        make_subject(f"S{k + 1}", cortex, sample_scenes(n_train, rng, exponent), seed, int(counts[k]), noise)
        for k in range(n_subjects - 1)
    ]
    test = make_subject(f"S{n_subjects}", cortex, sample_scenes(n_test, rng, exponent), seed, int(counts[-1]), noise)
    semantic = np.random.default_rng(derive(seed, "semantic")).standard_normal((N_ATTRIBUTES, d_target))
    return Dataset(tuple(subjects), test, semantic.astype(np.float32))


def pretraining_texts(n: int, seed: int, prompt: str, exponent: float = 1.0, hint_rate: float = 0.5) -> list[str]:
    """The in-repo LM's pretraining text: "[hint] prompt caption" for ``n`` scenes (both references).

    [INF] With probability ``hint_rate`` the text starts with the scene's content words in random order
    ("blue circle red square left describe the scene a red circle left of a blue square"), so that, like a
    real LLM, the LM learns to condition on its context; without hints it learns the caption prior alone.
    """
    check_number("hint_rate", hint_rate)
    rng = np.random.default_rng(derive(seed, "corpus"))
    texts = []
    for scene in sample_scenes(n, rng, exponent):
        for caption in captions(scene):
            words = [w for w in caption.split() if w not in ("a", "of")]
            hint = " ".join(rng.permutation(words)) + " " if rng.random() < hint_rate else ""
            texts.append(f"{hint}{prompt} {caption}")
    return texts
