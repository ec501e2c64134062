"""Rendering and reading back: F0 from the waveform (YIN, checked against the rendered F0 and against pYIN),
SER on prosodic features."""

import numpy as np
import pytest
from icml26_emotion_sae.audio import (
    BANDWIDTHS,
    HOP,
    SAMPLE_RATE,
    EmotionRecognizer,
    formant_response,
    prosodic_features,
    render,
    track_f0,
)
from icml26_emotion_sae.data import EMOTIONS, N_PHONES, random_texts, synthesise_prosody


def cents(f0: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return np.abs(1200 * np.log2(f0 / reference))


def test_formant_response_is_the_resonator_cascade():
    """|H| equals scipy's frequency response of the two Klatt resonators in cascade; unit gain at 0 Hz."""
    from scipy.signal import freqz

    formants = np.array([[500.0, 1500.0]])
    freqs = np.array([[0.0, 130.0, 500.0, 1500.0, 3000.0]])
    expected = np.ones(freqs.shape[1])
    for f, bw in zip(formants[0], BANDWIDTHS, strict=True):
        c, b = (
            -np.exp(-2 * np.pi * bw / SAMPLE_RATE),
            2 * np.exp(-np.pi * bw / SAMPLE_RATE) * np.cos(2 * np.pi * f / SAMPLE_RATE),
        )
        expected *= np.abs(freqz([1 - b - c], [1, -b, -c], worN=freqs[0], fs=SAMPLE_RATE)[1])
    response = formant_response(freqs, formants)[0]
    np.testing.assert_allclose(response, expected, rtol=1e-9)
    assert response[0] == pytest.approx(1.0) and response[2] > 5 * response[1]


def test_render_then_yin_recovers_the_frame_f0():
    frames = np.array([[3, 110.0, 0.5]] * 6 + [[8, 180.0, 0.8]] * 6)
    audio = render(frames)
    assert audio.shape == (12 * HOP,) and audio.dtype == np.float32
    f0 = track_f0(audio, SAMPLE_RATE)
    first, second = np.median(f0[3:9]), np.median(f0[15:21])  # 20 ms hops, away from the step
    assert abs(1200 * np.log2(first / 110.0)) < 20 and abs(1200 * np.log2(second / 180.0)) < 20


def test_yin_reads_back_f0_over_phones_x_f0():
    """Steady vowels of every phone at 70..300 Hz: every inner hop within 25 cents of the rendered F0 (the
    source has its strongest harmonic at F0, as voiced speech has, so YIN does not lock onto 2-3 periods)."""
    assert abs(np.median(track_f0(render(np.array([[4, 130.0, 0.5]] * 25)), SAMPLE_RATE)) - 130) < 1
    errors = [
        cents(track_f0(render(np.array([[phone, f0, 0.5]] * 8)), SAMPLE_RATE)[3:-3], f0)
        for phone in range(N_PHONES)
        for f0 in np.geomspace(70, 300, 7)
    ]
    assert np.max(errors) < 25


def test_yin_reads_back_f0_of_corpus_speech():
    """Utterances of every emotion, whose F0 jumps between 80 ms phones: fewer than 5% of hops are more than
    300 cents off the rendered F0, and the SER's mean log2 F0 is within 0.03 octave of the frames' mean."""
    rng = np.random.default_rng(1)
    texts = random_texts(20, rng)
    for emotion in EMOTIONS:
        wrong, bias = [], []
        for text in texts:
            frames = synthesise_prosody(text, emotion, rng)
            audio = render(frames)
            f0 = track_f0(audio, SAMPLE_RATE)
            centre = np.clip(np.arange(len(f0)) * (HOP // 2) / HOP - 0.5, 0, len(frames) - 1)  # in frames
            wrong.append(cents(f0, np.interp(centre, np.arange(len(frames)), frames[:, 1])) > 300)
            bias.append(prosodic_features(audio, SAMPLE_RATE, len(text))[0] - np.log2(frames[:, 1]).mean())
        assert np.concatenate(wrong).mean() < 0.05, emotion
        assert abs(np.mean(bias)) < 0.03, emotion


def test_yin_agrees_with_pyin():
    audio = render(np.array([[5, 140.0, 0.6]] * 10))
    yin, pyin = track_f0(audio, SAMPLE_RATE), track_f0(audio, SAMPLE_RATE, "pyin")
    cents = 1200 * np.abs(np.log2(yin[4:-4] / pyin[4:-4]))
    assert np.nanmedian(cents) < 10


def test_features_and_ser_separate_the_emotions():
    rng = np.random.default_rng(0)
    texts = random_texts(20, rng)
    X, y = [], []
    for label, emotion in enumerate(EMOTIONS):
        for text in texts:
            X.append(prosodic_features(render(synthesise_prosody(text, emotion, rng)), SAMPLE_RATE, len(text)))
            y.append(label)
    X, y = np.array(X), np.array(y)
    np.testing.assert_allclose(X[y == 3, 3], 0.12, rtol=1e-6)  # sad: 3 frames of 40 ms per phone
    train = np.arange(len(y)) % 2 == 0
    ser = EmotionRecognizer().fit(X[train], y[train])
    probs = ser.predict_proba(X[~train])
    assert probs.shape == (len(y) // 2, 4)
    assert (probs.argmax(1) == y[~train]).mean() > 0.9


def test_bad_inputs():
    audio = render(np.array([[1, 120.0, 0.5]] * 4))
    with pytest.raises(ValueError, match="sr=16000"):
        track_f0(audio, 16000)
    with pytest.raises(ValueError, match="sr=16000"):
        prosodic_features(audio, 16000, 2)
    with pytest.raises(ValueError, match="method='crepe'"):
        track_f0(audio, SAMPLE_RATE, "crepe")
    with pytest.raises(ValueError, match="audio="):
        track_f0(audio[:100], SAMPLE_RATE)
    with pytest.raises(ValueError, match="n_phones=0"):
        prosodic_features(audio, SAMPLE_RATE, 0)
    with pytest.raises(ValueError, match="frames="):
        render(np.array([[1, -5.0, 0.5]]))
    with pytest.raises(ValueError, match="labels="):
        EmotionRecognizer().fit(np.ones((3, 4)), np.zeros(3))
