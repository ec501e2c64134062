"""The prosody synthesiser and the k-means semantic tokens."""

import itertools

import numpy as np
import pytest
from icml26_emotion_sae.data import (
    EMOTIONS,
    PROSODY,
    SemanticTokenizer,
    frame_features,
    random_texts,
    read_phones,
    synthesise_prosody,
)


def test_texts_never_repeat_a_phone_and_frames_read_back():
    rng = np.random.default_rng(0)
    for text in random_texts(50, rng):
        assert all(a != b for a, b in itertools.pairwise(text)) and 5 <= len(text) <= 9
        for emotion in EMOTIONS:
            frames = synthesise_prosody(text, emotion, rng)
            assert len(frames) == len(text) * PROSODY[emotion].frames_per_phone
            assert read_phones(frames) == text


def test_emotions_shift_prosody_in_the_stated_directions():
    rng = np.random.default_rng(1)
    texts = random_texts(40, rng)
    stats = {e: np.concatenate([synthesise_prosody(t, e, rng) for t in texts]) for e in EMOTIONS}
    f0 = {e: np.log(s[:, 1]).mean() for e, s in stats.items()}
    spread = {e: np.log(s[:, 1]).std() for e, s in stats.items()}
    energy = {e: s[:, 2].mean() for e, s in stats.items()}
    assert f0["happy"] > f0["angry"] > f0["neutral"] > f0["sad"]
    assert spread["happy"] > spread["neutral"] > spread["sad"]
    assert energy["angry"] > energy["happy"] > energy["neutral"] > energy["sad"]


def test_tokenizer_round_trip_keeps_phones_and_approximates_f0():
    rng = np.random.default_rng(2)
    frames = np.concatenate([synthesise_prosody(t, e, rng) for t in random_texts(60, rng) for e in EMOTIONS])
    tokenizer = SemanticTokenizer.fit(frames, 80, seed=0)
    decoded = tokenizer.decode(tokenizer.encode(frames))
    np.testing.assert_array_equal(decoded[:, 0], frames[:, 0])
    cents = 1200 * np.abs(np.log2(decoded[:, 1] / frames[:, 1]))
    assert np.median(cents) < 100  # within a semitone
    assert frame_features(frames).shape == (len(frames), 22)


def test_bad_inputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="emotion='bored'"):
        synthesise_prosody([1, 2], "bored", rng)
    with pytest.raises(ValueError, match="text="):
        synthesise_prosody([], "sad", rng)
    with pytest.raises(ValueError, match="text=20"):
        synthesise_prosody([1, 20], "sad", rng)
    with pytest.raises(ValueError, match="frames="):
        frame_features(np.ones((3, 2)))
    with pytest.raises(ValueError, match="tokens="):
        SemanticTokenizer(np.zeros((30, 22))).decode(np.array([30]))
    with pytest.raises(ValueError, match="n="):
        random_texts(0, rng)
    with pytest.raises(ValueError, match="n_tokens=5"):
        SemanticTokenizer.fit(np.ones((50, 3)), 5, 0)
