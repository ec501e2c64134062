"""The modular pipeline: its type classifier, routing and weights."""

import numpy as np
import pytest
import torch
from icml26_recap import CAPTCHA_TYPES, ModularPipeline, ReCAPAgent, TypeClassifier, collect, sft_samples
from icml26_recap.baselines import CLASSIFIER_STEPS, train_classifier
from icml26_recap.method import tokens
from torch.nn import functional as F


def _captcha_samples(episodes, seed, split="train"):
    return sft_samples([t for k in CAPTCHA_TYPES for t in collect(k, episodes, seed, split=split)])


def test_type_classifier_tells_the_seven_types_apart():
    """Mean test accuracy over three initialisations (one init alone sat one test sample from the bound)."""
    train, test = _captcha_samples(3, 0), _captcha_samples(4, 1, "test")
    image = torch.from_numpy(np.stack([s.image for s in test])).permute(0, 3, 1, 2)
    words = torch.tensor([tokens(s.instruction) for s in test])
    accuracies = []
    for seed in range(3):
        classifier = TypeClassifier(seed=seed)
        train_classifier(classifier, train, CLASSIFIER_STEPS)
        predicted = classifier(image, words).argmax(-1).tolist()
        accuracies.append(np.mean([CAPTCHA_TYPES[p] == s.kind for p, s in zip(predicted, test, strict=True)]))
    assert np.mean(accuracies) >= 0.9  # chance is 1/7


def test_train_classifier_scales_the_screenshots_once_and_trains_as_the_per_step_path(monkeypatch):
    """0.1.3 scales the screenshots to [-1, 1] once, not at every full-batch step: the same weights to the bit as
    the forward pass it replaced (which scaled them at every step), with one scaling in all."""
    samples = _captcha_samples(1, 0)
    image = torch.from_numpy(np.stack([s.image for s in samples])).permute(0, 3, 1, 2)
    words = torch.tensor([tokens(s.instruction) for s in samples])
    target = torch.tensor([CAPTCHA_TYPES.index(s.kind) for s in samples])
    reference = TypeClassifier(dtype="float64", seed=4)
    optimiser = torch.optim.Adam(reference.parameters(), lr=1e-2)
    for _ in range(5):
        value = F.cross_entropy(reference(image, words), target)
        optimiser.zero_grad()
        value.backward()
        optimiser.step()
    scaled = []
    pixels = TypeClassifier.pixels
    monkeypatch.setattr(TypeClassifier, "pixels", lambda self, image: scaled.append(1) or pixels(self, image))
    classifier = TypeClassifier(dtype="float64", seed=4)
    train_classifier(classifier, samples, 5)
    assert len(scaled) == 1
    assert all(torch.equal(v, classifier.state_dict()[k]) for k, v in reference.state_dict().items())


def test_pipeline_routes_and_its_weights_round_trip():
    solvers = {k: ReCAPAgent(64, 8, 16) for k in CAPTCHA_TYPES}
    pipeline = ModularPipeline(TypeClassifier(), solvers)
    samples = _captcha_samples(1, 0)
    actions, reflections = pipeline.act([_obs(s) for s in samples], np.stack([s.context for s in samples]))
    assert len(actions) == len(samples) == len(reflections)
    other = ModularPipeline(TypeClassifier(), {k: ReCAPAgent(64, 8, 16) for k in CAPTCHA_TYPES})
    other.load_state_dict(pipeline.state_dict())
    assert all(torch.equal(v, other.state_dict()[k]) for k, v in pipeline.state_dict().items())


def _obs(sample):
    from icml26_recap import Observation

    return Observation(sample.image, sample.instruction)


def test_pipeline_bad_inputs():
    with pytest.raises(ValueError, match="solvers="):
        ModularPipeline(TypeClassifier(), {"text": ReCAPAgent(64, 8, 16)})
    with pytest.raises(ValueError, match="samples="):
        train_classifier(TypeClassifier(), [], 1)
    with pytest.raises(ValueError, match="steps="):
        train_classifier(TypeClassifier(), sft_samples(collect("text", 1, 0)), 0)
    with pytest.raises(ValueError, match="kind="):
        train_classifier(TypeClassifier(), sft_samples(collect("type_field", 1, 0)), 1)


def test_pipeline_fit_does_not_read_the_global_generator():
    """Its classifier was drawn from torch's global generator as it happened to be (cache state, thread order)."""
    samples = _captcha_samples(1, 0)
    fitted = []
    for global_seed in (0, 1):
        torch.manual_seed(global_seed)
        pipeline = ModularPipeline.fit(samples, 64, 1, 1e-3, 8, seed=5, width=8, hidden=16)
        fitted.append(pipeline.state_dict())
    assert all(torch.equal(v, fitted[1][k]) for k, v in fitted[0].items())
