"""The miniature LLM-TTS world of one seed, built once and cached: corpus, semantic tokenizer, backbone,
emotion recogniser, SAE; and ``evaluate``, which generates, renders to audio and scores emotion and content.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import cached, derive, fingerprint
from icml26_shared.records import source_hash
from rapidfuzz.distance import Levenshtein

from .audio import SAMPLE_RATE, EmotionRecognizer, prosodic_features, render
from .backbone import EMOTION_POSITION, Hook, TinyTTS, decoded_lengths, train_tts
from .data import EMOTIONS, MAX_FRAMES, SemanticTokenizer, random_texts, read_phones, synthesise_prosody
from .method import TopKSAE, train_sae


@dataclass
class Corpus:
    """Paired utterances: every text spoken in every emotion; ``tokens`` (N, MAX_FRAMES) EOS-padded."""

    texts: list[list[int]]
    emotions: list[str]
    frames: list[np.ndarray]
    lengths: np.ndarray
    tokens: np.ndarray | None = None

    def tokenize(self, tokenizer: SemanticTokenizer) -> Corpus:
        """Fill ``tokens`` with the semantic tokens of every utterance."""
        self.tokens = np.full((len(self.frames), MAX_FRAMES), tokenizer.n_tokens, dtype=np.int64)  # EOS
        for i, f in enumerate(self.frames):
            self.tokens[i, : len(f)] = tokenizer.encode(f)
        return self


@dataclass
class World:
    tokenizer: SemanticTokenizer
    tts: TinyTTS
    sae: TopKSAE
    ser: EmotionRecognizer
    corpus: Corpus  # the analysis corpus: SAE states, feature selection, SER training
    states: torch.Tensor  # (N, L, d) residuals of the analysis corpus at the hooked layer
    mask: torch.Tensor  # (N, L) positions that exist during generation
    analysis_features: np.ndarray  # (N, 4) SER features of the analysis corpus, from its audio
    layer: int
    tts_losses: np.ndarray
    sae_losses: np.ndarray


def make_corpus(n_texts: int, rng: np.random.Generator) -> Corpus:
    """``n_texts`` random texts x the four emotions."""
    texts, emotions, frames = [], [], []
    for text in random_texts(n_texts, rng):
        for emotion in EMOTIONS:
            texts.append(text)
            emotions.append(emotion)
            frames.append(synthesise_prosody(text, emotion, rng))
    return Corpus(texts, emotions, frames, np.array([len(f) for f in frames]))


def sequences(tts: TinyTTS, corpus: Corpus) -> torch.Tensor:
    return torch.tensor(
        [
            tts.vocab.training_sequence(t, e, tok[:n])
            for t, e, tok, n in zip(corpus.texts, corpus.emotions, corpus.tokens, corpus.lengths)
        ]
    )


@torch.no_grad()
def corpus_states(tts: TinyTTS, corpus: Corpus, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Residuals (N, L, d) after block ``layer`` over whole utterances (teacher forcing), and the mask (N, L)
    of the positions a hook edits while generating them: emotion token, BOS, s_1 .. s_T."""
    tokens = sequences(tts, corpus)
    mask = (tokens != tts.vocab.pad) & (tokens != tts.vocab.eos)
    mask[:, :EMOTION_POSITION] = False
    return tts.residuals(tokens, layer), mask


def audio_features(texts: list[list[int]], frames: list[np.ndarray]) -> np.ndarray:
    """SER features of each utterance, from its rendered waveform."""
    return np.stack([prosodic_features(render(f), SAMPLE_RATE, len(t)) for t, f in zip(texts, frames)])


def build_world(config, seed: int) -> World:
    """Tokenizer, backbone, SER and SAE of ``seed`` (trained models cached through ``icml26_shared.cached``)."""
    torch.manual_seed(derive(seed, "torch"))
    key = fingerprint({"config": config.as_dict(), "seed": seed, "code": source_hash(__name__)})[:16]
    rng = np.random.default_rng(derive(seed, "corpus"))
    train = make_corpus(config.n_train_texts, rng)
    all_frames = np.concatenate(train.frames)
    sample = np.random.default_rng(derive(seed, "kmeans")).choice(len(all_frames), config.kmeans_frames, replace=False)
    centroids = cached(
        f"emotion-sae/tokenizer-{key}",
        lambda: {
            "centroids": SemanticTokenizer.fit(all_frames[sample], config.n_tokens, derive(seed, "kmeans")).centroids
        },
    )["centroids"]
    tokenizer = SemanticTokenizer(centroids)
    train.tokenize(tokenizer)
    analysis = make_corpus(config.n_analysis_texts, np.random.default_rng(derive(seed, "analysis"))).tokenize(tokenizer)

    tts = TinyTTS(tokenizer.n_tokens, config.d_model, config.n_layers, config.n_heads)

    def fit_tts() -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(derive(seed, "tts"))
        losses = train_tts(tts, sequences(tts, train), config.tts_steps, config.tts_batch, config.tts_lr, g)
        return {**tts.state_dict(), "_losses": torch.tensor(losses)}

    state = cached(f"emotion-sae/tts-{key}", fit_tts)
    tts_losses = state.pop("_losses").numpy()
    tts.load_state_dict(state)
    tts.eval()
    for p in tts.parameters():
        p.requires_grad_(False)  # the backbone stays frozen from here on

    states, mask = corpus_states(tts, analysis, config.layer)
    sae = TopKSAE(config.d_model, config.d_sae, config.k, torch.Generator().manual_seed(derive(seed, "sae_init")))

    def fit_sae() -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(derive(seed, "sae"))
        losses = train_sae(sae, states[mask], config.sae_steps, config.sae_batch, config.sae_lr, g)
        return {**sae.state_dict(), "_losses": torch.tensor(losses)}

    state = cached(f"emotion-sae/sae-{key}", fit_sae)
    sae_losses = state.pop("_losses").numpy()
    sae.load_state_dict(state)
    for p in sae.parameters():
        p.requires_grad_(False)

    decoded = [tokenizer.decode(tok[:n]) for tok, n in zip(analysis.tokens, analysis.lengths)]
    features = audio_features(analysis.texts, decoded)
    labels = np.array([EMOTIONS.index(e) for e in analysis.emotions])
    ser = EmotionRecognizer(derive(seed, "ser")).fit(features, labels)
    return World(tokenizer, tts, sae, ser, analysis, states, mask, features, config.layer, tts_losses, sae_losses)


@dataclass
class Evaluation:
    """Per-utterance outcome of one generation condition."""

    probs: np.ndarray  # (n, 4) SER probabilities
    content: np.ndarray  # (n,) 1 - phone error rate (normalised Levenshtein), vs the text
    log2_f0: np.ndarray  # (n,) mean log2 F0 read back from the audio

    def prob(self, emotion: str) -> float:
        return float(self.probs[:, EMOTIONS.index(emotion)].mean())


def evaluate(world: World, texts: list[list[int]], emotion: str, hook: Hook | None = None) -> Evaluation:
    """Generate ``texts`` prompted with ``emotion`` (hook at ``world.layer``), render, and score on audio."""
    tokens = world.tts.generate(texts, [emotion] * len(texts), hook, world.layer if hook else None)
    lengths = decoded_lengths(tokens, world.tts.vocab.eos)
    frames, content = [], []
    for text, tok, n in zip(texts, tokens, lengths):
        if n < 2:  # nothing to hear: scored as wrong content, rendered as two frames of token 0
            frames.append(world.tokenizer.decode(np.zeros(2, dtype=int)))
            content.append(0.0)
            continue
        frames.append(world.tokenizer.decode(tok[:n]))
        content.append(1.0 - Levenshtein.normalized_distance(read_phones(frames[-1]), text))
    features = audio_features(texts, frames)
    return Evaluation(world.ser.predict_proba(features), np.array(content), features[:, 0])
