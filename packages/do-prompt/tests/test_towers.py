"""The text tower is all-MiniLM-L6-v2 as sentence-transformers computes it; the prompt path is the same network."""

import numpy as np
import pytest
import torch

SENTENCES = ["a photo of a zero.", "a photo of an ankle boot.", "The quick brown fox.", "t-shirt"]
NAMES = ["zero", "ankle boot", "t-shirt", "bag"]


def test_encode_matches_sentence_transformers(text):
    from icml26_shared.datasets import minilm_weights_path
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm_weights_path().parent), device="cpu")
    expected = reference.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    ours = text.encode(SENTENCES).numpy()
    np.testing.assert_allclose(ours, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_prompt_path_with_hand_context_equals_the_sentence(text):
    ctx = text.word_embeddings("a photo of a")  # (4, 384): CoOp's initial context
    via_prompts = text.encode_prompts(ctx[None], NAMES)[0]
    via_sentences = text.encode([f"a photo of a {n}." for n in NAMES])
    torch.testing.assert_close(via_prompts, via_sentences, atol=1e-5, rtol=0)


def test_deep_prompt_equal_to_the_hidden_state_changes_nothing(text):
    ids = torch.tensor([text.tokenizer.encode("a photo of a zero.").ids])
    with torch.no_grad():
        hidden = text.bert(input_ids=ids, output_hidden_states=True).hidden_states
    ctx = text.word_embeddings("a photo of a")
    prompts = torch.stack([ctx, hidden[1][0, 1:5], hidden[2][0, 1:5]])  # depths 0, 1, 2
    torch.testing.assert_close(
        text.encode_prompts(prompts, ["zero"])[0], text.encode(["a photo of a zero."]), atol=1e-5, rtol=0
    )
    moved = prompts.clone()
    moved[1] += 1.0
    assert not torch.allclose(text.encode_prompts(moved, ["zero"])[0], text.encode(["a photo of a zero."]))


def test_prompt_sets_batch_and_gradients_reach_the_context(text):
    ctx = (text.word_embeddings("a photo of a") + 0.01 * torch.randn(4, text.width)).requires_grad_()
    other = torch.randn(1, 4, text.width) * 0.05
    both = text.encode_prompts(torch.stack([ctx[None], other]), NAMES)
    torch.testing.assert_close(both[1], text.encode_prompts(other, NAMES)[0], atol=1e-5, rtol=0)
    both[0].sum().backward()
    assert ctx.grad is not None and torch.isfinite(ctx.grad).all() and ctx.grad.abs().sum() > 0
    assert all(p.grad is None for p in text.parameters())  # the tower stays frozen


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda t: t.encode_prompts(torch.zeros(1, 4, 384), []), "class_names"),
        (lambda t: t.encode_prompts(torch.zeros(1, 4, 384), ["a", "a"]), "class_names"),
        (lambda t: t.encode_prompts(torch.zeros(1, 600, 384), ["zero"]), "prompt length"),
        (lambda t: t.encode_prompts(torch.zeros(7, 4, 384), ["zero"]), "prompt depth"),
        (lambda t: t.encode_prompts(torch.full((1, 4, 384), float("nan")), ["zero"]), "prompts"),
        (lambda t: t.encode_prompts(torch.zeros(1, 4, 100), ["zero"]), "prompts"),
        (lambda t: t.encode([]), "sentences"),
    ],
)
def test_text_bad_inputs(text, call, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        call(text)


def test_visual_prompts_enter_the_image_tower(clip):
    tokens = clip.image.tokens(torch.rand(3, 3, 16, 16))
    assert tokens.shape == (3, 16, 64)
    plain = clip.image.encode_tokens(tokens)
    prompted = clip.image.encode_tokens(tokens, torch.randn(2, 4, 64))
    assert plain.shape == prompted.shape == (3, 384)
    torch.testing.assert_close(prompted.norm(dim=-1), torch.ones(3, dtype=prompted.dtype))
    assert not torch.allclose(plain, prompted)


@pytest.mark.parametrize(
    ("images", "named"),
    [
        (torch.rand(2, 3, 8, 8), "images"),
        (torch.rand(2, 1, 16, 16), "images"),
        (torch.rand(2, 3, 16, 16) * 2, "images"),
        (-torch.rand(2, 3, 16, 16), "images"),
    ],
)
def test_image_bad_inputs(clip, images, named):
    with pytest.raises(ValueError, match=f"^{named}=.*expected"):
        clip.image.tokens(images)


def test_visual_prompt_deeper_than_the_tower_is_refused(clip):
    tokens = clip.image.tokens(torch.rand(1, 3, 16, 16))
    with pytest.raises(ValueError, match="^prompt depth=3"):
        clip.image.encode_tokens(tokens, torch.randn(3, 4, 64))


def test_towers_of_different_dtypes_are_refused(text):
    from icml26_do_prompt import FrozenCLIP, ImageTower

    with pytest.raises(ValueError, match="^image=.*float64"):
        FrozenCLIP(text, ImageTower(embed_dim=text.width, dtype=torch.float32))
