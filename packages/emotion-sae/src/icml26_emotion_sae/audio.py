"""From frames to audio and back: a source-filter synthesiser, F0 read back with librosa, and the speech
emotion recogniser (SER) that stands in for emotion2vec.

The emotion claims are checked on waveforms: generated semantic tokens -> decoded (phone, F0, energy)
frames -> ``render`` (harmonic source at F0, shaped by the phone's two-formant envelope, scaled by energy)
-> ``track_f0`` (librosa's YIN; pYIN on request) and RMS energy -> ``prosodic_features`` -> SER.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_array, check_choice, check_int, fail

from .data import N_PHONES

SAMPLE_RATE = 8000
HOP = SAMPLE_RATE // 25  # one semantic-token frame = 40 ms = 320 samples
F0_RANGE = (60.0, 400.0)  # search range of the pitch tracker, Hz
F0_FRAME = 400  # 50 ms analysis window of the pitch tracker: 3 periods of the 60 Hz floor (as Praat sets it)
FORMANTS = np.stack(  # (N_PHONES, 2): F1 in 300..850 Hz, F2 in 900..2500 Hz, a fixed vowel-like table
    [
        300 + 550 * ((np.arange(N_PHONES) * 7) % N_PHONES) / N_PHONES,
        900 + 1600 * ((np.arange(N_PHONES) * 3) % N_PHONES) / N_PHONES,
    ],
    axis=1,
)
BANDWIDTHS = (90.0, 120.0)  # Hz, of F1 and F2 (typical vowel formant bandwidths)
N_HARMONICS = 30
FEATURES = ("mean_log2_f0", "std_log2_f0", "mean_log_rms", "seconds_per_phone")


def check_sample_rate(sr: int) -> int:
    """The one sample rate the synthesiser, the pitch tracker settings and the SER were built for."""
    if isinstance(sr, bool) or not isinstance(sr, int | np.integer) or sr != SAMPLE_RATE:
        raise fail("sr", sr, f"audio at {SAMPLE_RATE} Hz (resample first, e.g. librosa.resample)")
    return int(sr)


def formant_response(freqs: np.ndarray, formants: np.ndarray) -> np.ndarray:
    """|H(f)| of the phone's vocal tract: two digital resonators in cascade (Klatt 1980), each with unit
    gain at 0 Hz, so the tract passes F0 and boosts the harmonics near F1 and F2.

    ``freqs`` (T, K) Hz, ``formants`` (T, 2) Hz -> (T, K).
    """
    omega = 2 * np.pi * freqs / SAMPLE_RATE
    response = np.ones_like(freqs)
    for i, bandwidth in enumerate(BANDWIDTHS):
        c = -np.exp(-2 * np.pi * bandwidth / SAMPLE_RATE)
        b = 2 * np.exp(-np.pi * bandwidth / SAMPLE_RATE) * np.cos(2 * np.pi * formants[:, i : i + 1] / SAMPLE_RATE)
        response *= np.abs((1 - b - c) / (1 - b * np.exp(-1j * omega) - c * np.exp(-2j * omega)))
    return response


def render(frames: np.ndarray) -> np.ndarray:
    """Waveform (T * HOP,) at ``SAMPLE_RATE`` of (T, 3) frames (phone, F0 Hz, energy).

    Voiced speech as a source-filter model: the glottal source is a harmonic series at F0 whose k-th
    harmonic has amplitude 1/k (glottal flow -12 dB/octave, lip radiation +6 dB/octave), so the strongest
    harmonic is F0 itself, as in voiced speech; the filter is the phone's two-formant vocal tract
    (``formant_response``). Harmonics k F0 (k <= 30, below 0.45 sr) keep a continuous phase (F0 interpolated
    per sample); each frame's spectrum is normalised to unit RMS, scaled by the frame's energy and
    interpolated between frame centres.
    """
    frames = check_array("frames", frames, ndim=2)
    if frames.shape[1] != 3 or (frames[:, 1] <= 0).any() or (frames[:, 2] < 0).any():
        raise fail("frames", frames, "an array (T, 3) of (phone, F0 > 0, energy >= 0)")
    T = len(frames)
    position = np.clip((np.arange(T * HOP) + 0.5) / HOP - 0.5, 0, T - 1)  # frame centres at (i + 1/2) HOP
    i0 = position.astype(int)
    i1, w = np.minimum(i0 + 1, T - 1), (position - i0)[:, None].astype(np.float32)
    k = np.arange(1, N_HARMONICS + 1, dtype=np.float32)
    freqs = frames[:, 1:2] * k  # (T, K) harmonic frequencies per frame
    spectrum = formant_response(freqs, FORMANTS[frames[:, 0].astype(int)]) / k * (freqs < 0.45 * SAMPLE_RATE)
    gains = (frames[:, 2:3] * spectrum / np.sqrt((spectrum**2).sum(1, keepdims=True) / 2)).astype(np.float32)
    gain = gains[i0] * (1 - w) + gains[i1] * w  # (n, K), linear between frame centres
    f0 = frames[i0, 1] * (1 - w[:, 0]) + frames[i1, 1] * w[:, 0]
    phase = (2 * np.pi * np.cumsum(f0) / SAMPLE_RATE) % (2 * np.pi)  # float64 sum, wrapped before float32
    return (gain * np.sin(phase.astype(np.float32)[:, None] * k)).sum(1)


def track_f0(audio: np.ndarray, sr: int, method: str = "yin") -> np.ndarray:
    """F0 (Hz) every 20 ms of a waveform, by librosa's YIN (default) or pYIN (NaN where unvoiced), over
    50 ms windows (``F0_FRAME``).

    YIN is the default because pYIN's Viterbi decoding costs ~100x more and the synthetic speech is
    always voiced; tests/test_audio.py checks YIN against the rendered F0 over a grid of phones x F0 and
    on corpus utterances, and against pYIN. The window is 50 ms, not 80 ms: a phone lasts 80 ms and emotional
    F0 jumps between phones, so an 80 ms window often spans two pitches and YIN halves F0 there.
    """
    import librosa

    check_sample_rate(sr)
    audio = check_array("audio", audio, ndim=1)
    check_choice("method", method, ("yin", "pyin"))
    if audio.size < 2 * HOP:
        raise fail("audio", audio, f"at least {2 * HOP} samples (two frames)")
    kwargs = {"fmin": F0_RANGE[0], "fmax": F0_RANGE[1], "sr": sr, "frame_length": F0_FRAME, "hop_length": HOP // 2}
    if method == "yin":
        return librosa.yin(audio.astype(np.float64), **kwargs)
    return librosa.pyin(audio.astype(np.float64), **kwargs)[0]


def prosodic_features(audio: np.ndarray, sr: int, n_phones: int) -> np.ndarray:
    """(4,) SER input: mean and std of log2 F0 over frames with energy, mean log RMS, seconds per phone.

    ``n_phones`` (from the transcript) turns duration into speaking rate.
    """
    import librosa

    f0 = track_f0(audio, sr)
    check_int("n_phones", n_phones, 1)
    rms = librosa.feature.rms(y=audio.astype(np.float64), frame_length=2 * HOP, hop_length=HOP // 2)[0]
    n = min(len(f0), len(rms))
    voiced = rms[:n] > 0.1 * rms.max() + 1e-9
    log_f0 = np.log2(f0[:n][voiced])
    return np.array([log_f0.mean(), log_f0.std(), np.log(rms[:n][voiced]).mean(), audio.size / sr / n_phones])


class EmotionRecognizer:
    """Speech emotion recogniser on prosodic features: standardised features -> multinomial logistic
    regression (scikit-learn). The emotion2vec stand-in: it hears only the waveform (and the phone count)."""

    def __init__(self, seed: int = 0) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000, random_state=seed))

    def fit(self, features: np.ndarray, labels: np.ndarray) -> EmotionRecognizer:
        """Fit on (n, 4) ``prosodic_features`` rows and integer emotion labels."""
        features = check_array("features", features, ndim=2)
        labels = np.asarray(labels)
        if labels.shape != (len(features),) or len(np.unique(labels)) < 2:
            raise fail("labels", labels, f"{len(features)} integer labels of at least two emotions")
        self.model.fit(features, labels)
        return self

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        """(n, 4) features -> (n, n_emotions) probabilities."""
        return self.model.predict_proba(check_array("features", features, ndim=2))
