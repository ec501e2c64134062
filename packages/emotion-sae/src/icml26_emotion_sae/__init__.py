"""Sparse autoencoders for interpretable emotion control in text-to-speech: reference implementation (icml26).

A top-k SAE trained on the residual stream of an LLM-based TTS backbone; emotion features selected by
their sentence-level activation-rate difference between emotional and neutral speech; induction and
suppression by editing those features at every generation step (backbone frozen), against global
mean-difference steering and random features. The miniature backbone, corpus, vocoder and emotion
recogniser are built in-repo (``data``, ``backbone``, ``audio``).
"""

from importlib.metadata import PackageNotFoundError, version

from .audio import EmotionRecognizer, prosodic_features, render, track_f0
from .backbone import HiddenStateBackbone, TinyTTS
from .baselines import global_steering, mean_difference, random_features
from .data import EMOTIONS, SemanticTokenizer, random_texts, synthesise_prosody
from .method import (
    TopKSAE,
    activation_rates,
    emotion_scores,
    explained_variance,
    feature_intervention,
    mean_active_values,
    sae_quality,
    select_features,
    train_sae,
)

try:
    __version__ = version("icml26-emotion-sae")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "EMOTIONS",
    "EmotionRecognizer",
    "HiddenStateBackbone",
    "SemanticTokenizer",
    "TinyTTS",
    "TopKSAE",
    "activation_rates",
    "emotion_scores",
    "explained_variance",
    "feature_intervention",
    "global_steering",
    "mean_active_values",
    "mean_difference",
    "prosodic_features",
    "random_features",
    "random_texts",
    "render",
    "sae_quality",
    "select_features",
    "synthesise_prosody",
    "track_f0",
    "train_sae",
]
