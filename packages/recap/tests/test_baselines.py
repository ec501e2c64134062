"""The modular pipeline: its type classifier, routing and weights."""

import numpy as np
import pytest
import torch
from icml26_recap import CAPTCHA_TYPES, ModularPipeline, ReCAPAgent, TypeClassifier, collect, sft_samples
from icml26_recap.baselines import CLASSIFIER_STEPS, train_classifier
from icml26_recap.method import tokens


def _captcha_samples(episodes, seed, split="train"):
    return sft_samples([t for k in CAPTCHA_TYPES for t in collect(k, episodes, seed, split=split)])


def test_type_classifier_tells_the_seven_types_apart():
    torch.manual_seed(0)
    classifier = TypeClassifier()
    train_classifier(classifier, _captcha_samples(3, 0), CLASSIFIER_STEPS, seed=0)
    test = _captcha_samples(4, 1, "test")
    image = torch.from_numpy(np.stack([s.image for s in test])).permute(0, 3, 1, 2)
    predicted = classifier(image, torch.tensor([tokens(s.instruction) for s in test])).argmax(-1).tolist()
    accuracy = np.mean([CAPTCHA_TYPES[p] == s.kind for p, s in zip(predicted, test, strict=True)])
    assert accuracy >= 0.9  # chance is 1/7


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
        train_classifier(TypeClassifier(), [], 1, 0)
    with pytest.raises(ValueError, match="steps="):
        train_classifier(TypeClassifier(), sft_samples(collect("text", 1, 0)), 0, 0)
    with pytest.raises(ValueError, match="kind="):
        train_classifier(TypeClassifier(), sft_samples(collect("type_field", 1, 0)), 1, 0)
