"""Generated emotional "speech" (a stand-in for an emotional TTS corpus) and its semantic tokens.

The prosody synthesiser turns a sentence (a string of phones from a 20-phone inventory) and an emotion
into per-frame targets: phone id, F0 (Hz) and energy, at 25 frames/s (the rate of LLM-TTS semantic tokens).
Emotions shift F0 mean and range, energy and speaking rate ([INF], after the usual prosodic profiles:
happy = higher, wider F0; angry = loud, raised F0; sad = low, flat, slow). Semantic tokens are k-means
clusters of frame features (phone one-hot, log F0, energy), like HuBERT/w2v-BERT units quantised by k-means.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_choice, check_int, fail

N_PHONES = 20
EMOTIONS = ("neutral", "happy", "angry", "sad")
FRAME_RATE = 25  # semantic tokens per second (IndexTTS2 / CosyVoice use 25 Hz)


@dataclass(frozen=True)
class Prosody:
    """One emotion's prosodic profile: F0 mean (Hz), F0 range (log-F0 gain on the phone accents),
    energy (linear amplitude) and frames per phone."""

    f0: float
    f0_range: float
    energy: float
    frames_per_phone: int


PROSODY = {  # [INF]: profiles in the direction of the SER literature (not measured values)
    "neutral": Prosody(f0=120.0, f0_range=0.10, energy=0.50, frames_per_phone=2),
    "happy": Prosody(f0=165.0, f0_range=0.30, energy=0.75, frames_per_phone=2),
    "angry": Prosody(f0=145.0, f0_range=0.20, energy=1.00, frames_per_phone=2),
    "sad": Prosody(f0=100.0, f0_range=0.05, energy=0.30, frames_per_phone=3),
}
PHONE_ACCENT = np.sin(np.arange(N_PHONES) * 2.4)  # intrinsic pitch accent of each phone, in [-1, 1]
MAX_PHONES = 9
MAX_FRAMES = MAX_PHONES * max(p.frames_per_phone for p in PROSODY.values())


def emotion_index(emotion: str) -> int:
    """Index of ``emotion`` in ``EMOTIONS``."""
    return EMOTIONS.index(check_choice("emotion", emotion, EMOTIONS))


def random_texts(
    n: int, rng: np.random.Generator, min_phones: int = 5, max_phones: int = MAX_PHONES
) -> list[list[int]]:
    """``n`` random sentences of ``min_phones``..``max_phones`` phones, no phone twice in a row (so that the
    phone sequence can be read back from frames by collapsing repeats)."""
    check_int("n", n, 1)
    check_int("min_phones", min_phones, 1, MAX_PHONES)
    check_int("max_phones", max_phones, min_phones, MAX_PHONES)
    texts = []
    for length in rng.integers(min_phones, max_phones + 1, n):
        text = [int(rng.integers(N_PHONES))]
        while len(text) < length:
            text.append(int((text[-1] + rng.integers(1, N_PHONES)) % N_PHONES))
        texts.append(text)
    return texts


def check_text(text: list[int]) -> list[int]:
    """A sentence: 1..MAX_PHONES phone ids in [0, N_PHONES)."""
    if not isinstance(text, list | tuple) or not 1 <= len(text) <= MAX_PHONES:
        raise fail("text", text, f"a list of 1..{MAX_PHONES} phone ids")
    return [check_int("text", p, 0, N_PHONES - 1) for p in text]


def synthesise_prosody(text: list[int], emotion: str, rng: np.random.Generator) -> np.ndarray:
    """Per-frame targets (T, 3) = (phone id, F0 in Hz, energy) of ``text`` spoken with ``emotion``.

    F0 = f0_e * s * exp(range_e * accent(phone) + 0.02 noise), s ~ 1 +- 5 % (speaker), energy = energy_e
    * (1 + 0.1 noise); every phone lasts ``frames_per_phone`` frames of 40 ms.
    """
    prosody = PROSODY[EMOTIONS[emotion_index(emotion)]]
    text = check_text(text)
    phones = np.repeat(np.asarray(text), prosody.frames_per_phone)
    speaker = 1.0 + 0.05 * rng.uniform(-1, 1)
    log_f0 = prosody.f0_range * PHONE_ACCENT[phones] + 0.02 * rng.normal(size=phones.size)
    f0 = prosody.f0 * speaker * np.exp(log_f0)
    energy = prosody.energy * (1.0 + 0.1 * rng.normal(size=phones.size))
    return np.stack([phones, f0, np.clip(energy, 0.05, None)], axis=1)


def frame_features(frames: np.ndarray, phone_scale: float = 4.0) -> np.ndarray:
    """Features k-means quantises: phone one-hot * ``phone_scale`` (so that clusters never mix phones),
    log2 F0 relative to 120 Hz, and energy. ``frames`` (T, 3) -> (T, N_PHONES + 2)."""
    frames = check_array("frames", frames, ndim=2)
    if frames.shape[1] != 3 or (frames[:, 1] <= 0).any():
        raise fail("frames", frames, "an array (T, 3) of (phone, F0 > 0, energy)")
    onehot = np.eye(N_PHONES)[frames[:, 0].astype(int)] * phone_scale
    return np.concatenate([onehot, np.log2(frames[:, 1:2] / 120.0) * 4.0, frames[:, 2:3] * 2.0], axis=1)


class SemanticTokenizer:
    """k-means semantic tokens: ``encode`` maps frames to their nearest centroid, ``decode`` maps tokens back
    to (phone, F0, energy) frames read off the centroids (the "vocoder input" of the miniature)."""

    def __init__(self, centroids: np.ndarray) -> None:
        self.centroids = check_array("centroids", centroids, ndim=2)
        if self.centroids.shape[1] != N_PHONES + 2:
            raise fail("centroids", self.centroids, f"an array (K, {N_PHONES + 2}) of frame-feature centroids")

    @classmethod
    def fit(cls, frames: np.ndarray, n_tokens: int, seed: int) -> SemanticTokenizer:
        """k-means (k-means++, 3 inits) over ``frame_features(frames)``."""
        from sklearn.cluster import KMeans

        check_int("n_tokens", n_tokens, N_PHONES)
        kmeans = KMeans(n_clusters=n_tokens, n_init=3, random_state=seed).fit(frame_features(frames))
        return cls(kmeans.cluster_centers_)

    @property
    def n_tokens(self) -> int:
        return len(self.centroids)

    def encode(self, frames: np.ndarray) -> np.ndarray:
        """(T, 3) frames -> (T,) token ids."""
        features = frame_features(frames)
        return ((features[:, None] - self.centroids[None]) ** 2).sum(-1).argmin(1)

    def decode(self, tokens: np.ndarray) -> np.ndarray:
        """(T,) token ids -> (T, 3) frames (phone = argmax of the centroid's one-hot part)."""
        tokens = np.asarray(tokens, dtype=int)
        if tokens.ndim != 1 or ((tokens < 0) | (tokens >= self.n_tokens)).any():
            raise fail("tokens", tokens, f"a 1-d array of token ids in [0, {self.n_tokens})")
        c = self.centroids[tokens]
        phones = c[:, :N_PHONES].argmax(1)
        f0 = 120.0 * 2.0 ** (c[:, N_PHONES] / 4.0)
        return np.stack([phones, f0, np.clip(c[:, N_PHONES + 1] / 2.0, 0.05, None)], axis=1)


def read_phones(frames: np.ndarray) -> list[int]:
    """The phone sequence of decoded frames: collapse repeated phones (texts never repeat a phone)."""
    phones = np.asarray(frames)[:, 0].astype(int)
    return [int(p) for i, p in enumerate(phones) if i == 0 or p != phones[i - 1]]
