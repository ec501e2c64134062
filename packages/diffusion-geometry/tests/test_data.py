"""Digits, conditions and the official prompt-pair format."""

import numpy as np
import pytest
from icml26_diffusion_geometry.data import (
    class_conditions,
    draw_pairs,
    load_digits_images,
    load_prompt_pairs,
    mixture_conditions,
)


def test_digits_are_real_images_in_minus_one_to_one():
    images, labels = load_digits_images()
    assert images.shape == (1797, 1, 8, 8) and labels.shape == (1797,)
    assert float(images.min()) == -1.0 and float(images.max()) == 1.0
    assert sorted(set(labels.tolist())) == list(range(10))


def test_conditions_sum_to_one_and_mixtures_are_off_the_one_hot_support():
    a, b = draw_pairs(np.random.default_rng(0), 50)
    assert (a != b).all()
    ood = mixture_conditions(a, b)
    assert np.allclose(ood.sum(1).numpy(), 1.0) and float(ood.max()) == 0.5
    assert np.allclose(class_conditions(a).sum(1).numpy(), 1.0)


def test_rejects_bad_conditions():
    with pytest.raises(ValueError, match="classes="):
        class_conditions(np.array([0, 10]))
    with pytest.raises(ValueError, match="second="):
        mixture_conditions(np.array([1, 2]), np.array([1, 3]))
    with pytest.raises(ValueError, match="weight="):
        mixture_conditions(np.array([1]), np.array([2]), weight=1.0)
    with pytest.raises(ValueError, match="n="):
        draw_pairs(np.random.default_rng(0), 0)


def _write(tmp_path, text):
    path = tmp_path / "pairs.tsv"
    path.write_text(text)
    return path


def test_prompt_pairs_load(tmp_path):
    path = _write(tmp_path, "pair_id\tlabel\tprompt\n1\tID\ta cat on a sofa\n1\tood\ta cat made of glass water\n")
    assert load_prompt_pairs(path) == {1: {"ID": "a cat on a sofa", "OOD": "a cat made of glass water"}}


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("pair\tlabel\tprompt\n1\tid\tx\n", "pair_id, label, prompt"),
        ("pair_id\tlabel\tprompt\n1\tweird\tx\n", "label="),
        ("pair_id\tlabel\tprompt\n1\tid\tx\n", "pair_id="),
        ("pair_id\tlabel\tprompt\none\tid\tx\n", "pair_id="),
    ],
)
def test_prompt_pairs_reject_bad_files(tmp_path, text, match):
    with pytest.raises(ValueError, match=match):
        load_prompt_pairs(_write(tmp_path, text))
    with pytest.raises(ValueError, match="path="):
        load_prompt_pairs(tmp_path / "missing.tsv")
