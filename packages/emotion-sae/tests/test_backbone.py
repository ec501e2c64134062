"""The tiny TTS backbone: KV-cached generation with a hook equals re-running the whole sequence; the hook
touches only generated positions; training learns; bad layers are refused."""

import numpy as np
import pytest
import torch
from icml26_emotion_sae.backbone import EMOTION_POSITION, PROMPT_LEN, TinyTTS, decoded_lengths, train_tts
from icml26_emotion_sae.data import MAX_FRAMES, MAX_PHONES, random_texts


def tiny(seed=0):
    torch.manual_seed(seed)
    return TinyTTS(n_semantic=24, d_model=16, n_layers=2, n_heads=2).eval()


def test_cached_generation_equals_full_recompute_with_a_hook():
    model = tiny()
    texts = random_texts(6, np.random.default_rng(0))
    emotions = ["neutral", "happy", "angry", "sad", "happy", "sad"]
    hook = lambda h: h + 0.5 * torch.sin(h)  # noqa: E731 - a position-wise edit
    fast = model.generate(texts, emotions, hook, layer=1)
    tokens = torch.tensor([model.vocab.prompt(t, e) for t, e in zip(texts, emotions)])
    with torch.no_grad():
        for _ in range(MAX_FRAMES):
            tokens = torch.cat([tokens, model(tokens, hook, 1)[:, -1].argmax(-1, keepdim=True)], dim=1)
    slow = tokens[:, PROMPT_LEN:].numpy()
    for row, n in enumerate(decoded_lengths(slow, model.vocab.eos)):
        slow[row, n:] = model.vocab.eos
    np.testing.assert_array_equal(fast, slow)


def test_hook_edits_the_residual_after_its_block():
    model = tiny()
    tokens = torch.tensor([[*model.vocab.prompt([1, 2, 3], "sad"), 0, 5, 7]])
    with torch.no_grad():
        plain = model(tokens)
        torch.testing.assert_close(model(tokens, lambda h: h, 1), plain)
        moved = (model(tokens, lambda h: h + torch.arange(16.0), 2) - plain).abs().amax(-1)[0]
        residual = model.residuals(tokens, 1)
        seen = []
        model(tokens, lambda h: seen.append(h) or h, 1)
    assert (moved[:EMOTION_POSITION] == 0).all() and (moved[EMOTION_POSITION:] > 0.01).all()  # text untouched
    torch.testing.assert_close(seen[0], residual[:, EMOTION_POSITION:])


def test_prompt_layout_and_lengths():
    model = tiny()
    prompt = model.vocab.prompt([4, 5], "angry")
    assert len(prompt) == PROMPT_LEN and prompt[: MAX_PHONES - 2] == [model.vocab.pad] * (MAX_PHONES - 2)
    assert prompt[-2:] == [model.vocab.emotion0 + 2, model.vocab.bos]
    np.testing.assert_array_equal(decoded_lengths(np.array([[1, 24, 24], [1, 2, 3]]), 24), [1, 3])


def test_training_learns_a_fixed_mapping():
    model = tiny().train()
    seqs = torch.tensor(
        [model.vocab.training_sequence([i % 20], "neutral", np.array([i % 24, (i + 1) % 24])) for i in range(20)]
    )
    losses = train_tts(model, seqs, steps=150, batch=20, lr=1e-2, generator=torch.Generator().manual_seed(0))
    assert losses[-1] < 0.25 * losses[0]


def test_bad_inputs():
    model = tiny()
    with pytest.raises(IndexError, match=r"layer=3.*\[1, 2\]"):
        model.residuals(torch.zeros(1, 4, dtype=torch.long), 3)
    with pytest.raises(IndexError, match="layer=0"):
        model.generate([[1, 2]], ["happy"], lambda h: h, layer=0)
    with pytest.raises(ValueError, match="emotion='bored'"):
        model.generate([[1, 2]], ["bored"])
    with pytest.raises(ValueError, match="emotions="):
        model.generate([[1, 2]], ["happy", "sad"])
    with pytest.raises(ValueError, match="text="):
        model.vocab.prompt(list(range(MAX_PHONES + 1)), "sad")
    with pytest.raises(ValueError, match="n_heads=3"):
        TinyTTS(24, d_model=16, n_heads=3)
