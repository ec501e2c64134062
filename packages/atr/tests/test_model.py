"""The tiny VLM: causality, the [MASK] path, token initialisation, pre-training and bad inputs."""

import numpy as np
import pytest
import torch
from icml26_atr import TinyVLM, default_vocabulary, pretrain
from icml26_atr.data import pretraining_token_ids


def small(vocab=12):
    torch.manual_seed(0)
    return TinyVLM(vocab, image_size=8, patch_size=2, d_model=16, heads=2).eval()


def test_shapes_and_causality():
    model = small()
    x, text = torch.rand(2, 1, 8, 8), torch.randint(0, 12, (2, 6))
    logits = model(x, text)
    assert logits.shape == (2, 6, 12)
    changed = text.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 12
    assert torch.allclose(model(x, changed)[:, :4], logits[:, :4], atol=1e-5)  # no peeking at later tokens
    assert not torch.allclose(model(x, changed)[:, 4:], logits[:, 4:])


def test_all_visual_tokens_masked_removes_the_image():
    model = small()
    text = torch.randint(0, 12, (2, 4))
    visual_a, visual_b = model.visual_tokens(torch.rand(2, 1, 8, 8)), model.visual_tokens(torch.rand(2, 1, 8, 8))
    mask = torch.ones(2, 16, dtype=torch.bool)
    assert torch.allclose(model.language_model(visual_a, text, mask), model.language_model(visual_b, text, mask))
    assert not torch.allclose(model.language_model(visual_a, text), model.language_model(visual_b, text))


def test_new_tokens_start_as_the_mean_of_the_source_rows():
    model = small()
    model.init_new_tokens([5, 6], [1, 2, 3])
    assert torch.allclose(model.head.weight[5], model.head.weight[[1, 2, 3]].mean(0))
    assert torch.equal(model.token_embed.weight[5], model.token_embed.weight[6])
    with pytest.raises(ValueError, match="new_ids="):
        model.init_new_tokens([1], [1, 2])


def test_pretraining_learns_rotation():
    vocab = default_vocabulary()
    torch.manual_seed(0)
    model = TinyVLM(len(vocab), image_size=8, patch_size=2, d_model=32, heads=2)
    from icml26_atr.data import load_images

    images = load_images("digits")[0][:400]
    losses = pretrain(model, images, vocab, 60, 64, 3e-3, 0)
    # from log 4 + ... towards 0: the last ten losses are 0.15 of the first ten after 60 steps (0.11 after 150)
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:10])
    used, answers = pretraining_token_ids(vocab)
    assert set(answers) < set(used)


def test_rejects_bad_images_and_text():
    model = small()
    text = torch.zeros(2, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="images="):
        model(torch.rand(2, 1, 9, 9), text)  # wrong size
    with pytest.raises(ValueError, match="images="):
        model(255 * torch.rand(2, 1, 8, 8), text)  # wrong range
    with pytest.raises(ValueError, match="images="):
        model(torch.full((2, 1, 8, 8), float("nan")), text)
    with pytest.raises(ValueError, match="text="):
        model(torch.rand(2, 1, 8, 8), torch.zeros(2, 40, dtype=torch.long))
    with pytest.raises(ValueError, match="visual_mask="):
        model.language_model(model.visual_tokens(torch.rand(2, 1, 8, 8)), text, torch.ones(2, 3, dtype=torch.bool))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"image_size": 9}, "image_size"), ({"d_model": 15}, "d_model"), ({"lm_layers": 0}, "lm_layers")],
)
def test_rejects_bad_architecture(kwargs, name):
    args = {"image_size": 8, "patch_size": 2, "d_model": 16, "heads": 2} | kwargs
    with pytest.raises(ValueError, match=f"{name}="):
        TinyVLM(12, **args)


def test_candidate_logits_match_one_sequence_per_candidate():
    """The packed scoring (shared prefix computed once) gives the logits of each full sequence."""
    torch.manual_seed(0)
    model = TinyVLM(30, image_size=8, patch_size=2, d_model=16, heads=2, dtype=torch.float64).eval()
    visual, prefix = model.visual_tokens(torch.rand(3, 1, 8, 8)), torch.randint(0, 30, (3, 4))
    candidates = torch.randint(0, 30, (5, 2))
    packed = model.candidate_logits(visual, prefix, candidates)
    assert packed.shape == (3, 5, 3, 30)
    for c in range(5):
        full = model.language_model(visual, torch.cat([prefix, candidates[c].expand(3, -1)], 1))
        assert torch.allclose(packed[:, c], full[:, 3:], atol=1e-10)
    with pytest.raises(ValueError, match="prefix="):
        model.candidate_logits(visual, torch.zeros(3, 15, dtype=torch.long), candidates)


def test_rejects_a_dtype_other_than_float32_or_float64():
    with pytest.raises(ValueError, match="dtype="):
        TinyVLM(30, image_size=8, patch_size=2, d_model=16, heads=2, dtype=torch.float16)
