"""The specialised modular CAPTCHA pipeline the paper contrasts with a native GUI agent.

A screenshot type classifier routes each challenge to a per-type solver (a specialist agent trained only on
that CAPTCHA type's trajectories). It has no notion of general GUI tasks: whatever it is shown, it answers
as one of the seven CAPTCHA solvers. (The other baselines, the base agent trained on general GUI data only,
SFT without self-correction and training without general data, are ``ReCAPAgent`` trained on other data
mixtures; see ``experiment.py``.)
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_choice, check_int, fail
from torch import nn
from torch.nn import functional as F

from .data import Sample
from .env import Observation
from .method import VOCAB, AgentPolicy, ReCAPAgent, check_dtype, init_parameters, tokens, train
from .tasks import CAPTCHA_TYPES

CLASSIFIER_STEPS = 20  # the prompt words alone tell the seven types apart


class TypeClassifier(nn.Module):
    """Which CAPTCHA type a challenge is, from its screenshot (two strided convolutions, mean and max pooling)
    and its prompt words (a bag of words), through one linear layer; ``dtype`` and ``seed`` as ``ReCAPAgent``'s."""

    def __init__(self, types: tuple[str, ...] = CAPTCHA_TYPES, dtype: str = "float32", seed: int = 0) -> None:
        super().__init__()
        self.types = types
        self.convs = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU())
        self.words = nn.EmbeddingBag(len(VOCAB), 16, mode="mean", padding_idx=0)
        self.linear = nn.Linear(48, len(types))
        init_parameters(self, seed).to(check_dtype(dtype))

    def forward(self, image: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
        """image (B, 3, H, W) uint8, words (B, MAX_WORDS) -> logits (B, len(types))."""
        return self.classify(self.pixels(image), words)

    def pixels(self, image: torch.Tensor) -> torch.Tensor:
        """The convolutions' input: uint8 screenshots scaled to [-1, 1] in the weights' dtype (``train_classifier``
        computes it once for all its full-batch steps)."""
        return image.to(self.linear.weight.dtype) / 127.5 - 1

    def classify(self, pixels: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
        """Logits (B, len(types)) from ``pixels(image)`` and the prompt words."""
        f = self.convs(pixels)
        return self.linear(torch.cat([f.mean((2, 3)), f.amax((2, 3)), self.words(words)], 1))


def train_classifier(classifier: TypeClassifier, samples: list[Sample], steps: int) -> list[float]:
    """``steps`` full-batch Adam steps of cross-entropy on the screenshots and prompts of ``samples``."""
    if not samples:
        raise fail("samples", samples, "a non-empty list of CAPTCHA samples")
    image = torch.from_numpy(np.stack([s.image for s in samples])).permute(0, 3, 1, 2)
    words = torch.tensor([tokens(s.instruction) for s in samples])
    target = torch.tensor([classifier.types.index(check_choice("kind", s.kind, classifier.types)) for s in samples])
    pixels = classifier.pixels(image)  # the same every step
    optimiser = torch.optim.Adam(classifier.parameters(), lr=1e-2)
    losses = []
    for _ in range(check_int("steps", steps, 1)):
        value = F.cross_entropy(classifier.classify(pixels, words), target)
        optimiser.zero_grad()
        value.backward()
        optimiser.step()
        losses.append(value.item())
    return losses


class ModularPipeline:
    """Type classifier + one specialist solver per CAPTCHA type, as a batched policy."""

    def __init__(self, classifier: TypeClassifier, solvers: dict[str, ReCAPAgent]) -> None:
        missing = set(classifier.types) - set(solvers)
        if missing:
            raise fail("solvers", sorted(solvers), f"a solver for every type, missing {sorted(missing)}")
        self.classifier, self.solvers = classifier, solvers

    @classmethod
    def fit(
        cls, samples: list[Sample], size: int, epochs: int, lr: float, batch_size: int, seed: int, **agent_kw
    ) -> ModularPipeline:
        """Train the classifier and each type's specialist on the CAPTCHA samples of that type; every
        initialisation is drawn from ``seed`` (before 0.1.2 the classifier's came from torch's global generator
        as it happened to be)."""
        classifier = TypeClassifier(dtype=agent_kw.get("dtype", "float32"), seed=seed)
        train_classifier(classifier, samples, CLASSIFIER_STEPS)
        solvers = {}
        for i, kind in enumerate(CAPTCHA_TYPES):
            solvers[kind] = ReCAPAgent(size, **agent_kw, seed=seed + i)
            train(solvers[kind], [s for s in samples if s.kind == kind], epochs, lr, batch_size, seed + i)
        return cls(classifier.eval(), solvers)

    def act(self, observations: list[Observation], contexts: np.ndarray) -> tuple[list, list[str]]:
        if not observations:
            return [], []
        image = torch.from_numpy(np.stack([o.image for o in observations])).permute(0, 3, 1, 2)
        words = torch.tensor([tokens(o.instruction) for o in observations])
        with torch.no_grad():
            routed = self.classifier(image, words).argmax(-1).tolist()
        actions: list = [None] * len(observations)
        reflections = ["none"] * len(observations)
        for t, kind in enumerate(self.classifier.types):
            idx = [i for i, r in enumerate(routed) if r == t]
            if idx:
                acts, refl = AgentPolicy(self.solvers[kind]).act([observations[i] for i in idx], contexts[idx])
                for i, a, r in zip(idx, acts, refl, strict=True):
                    actions[i], reflections[i] = a, r
        return actions, reflections

    def state_dict(self) -> dict[str, torch.Tensor]:
        """All weights in one flat dict (classifier.* and <type>.*), for ``icml26_shared.cached``."""
        out = {f"classifier.{k}": v for k, v in self.classifier.state_dict().items()}
        for kind, solver in self.solvers.items():
            out.update({f"{kind}.{k}": v for k, v in solver.state_dict().items()})
        return out

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> ModularPipeline:
        def part(prefix: str) -> dict[str, torch.Tensor]:
            return {k[len(prefix) + 1 :]: v for k, v in state.items() if k.startswith(prefix + ".")}

        self.classifier.load_state_dict(part("classifier"))
        for kind, solver in self.solvers.items():
            solver.load_state_dict(part(kind))
        return self
