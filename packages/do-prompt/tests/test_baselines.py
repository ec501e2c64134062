"""Zero-shot, CoOp and MaPLe on the real text tower."""

import pytest
import torch
from icml26_do_prompt import CoOp, MaPLe, ZeroShot, train_prompt

NAMES = ["zero", "one", "two"]


def test_coop_at_its_initialisation_is_zero_shot_clip(clip):
    tokens = clip.image.tokens(torch.rand(5, 3, 16, 16))
    coop = CoOp(clip, n_ctx=4)  # "a photo of a" = the hand prompt's words
    torch.testing.assert_close(
        coop.logits(clip, tokens, NAMES), ZeroShot().logits(clip, tokens, NAMES), atol=1e-4, rtol=0
    )


def test_maple_couples_text_and_visual_prompts(clip):
    torch.manual_seed(0)
    maple = MaPLe(clip, n_ctx=4, depth=2)
    tokens = clip.image.tokens(torch.rand(4, 3, 16, 16))
    assert maple.prompt_tokens().shape == (2, 4, 384)
    assert maple.visual_prompts(maple.prompt_tokens()[None]).shape == (1, 2, 4, 64)
    logits = maple.logits(clip, tokens, NAMES)
    assert logits.shape == (4, 3)
    logits.sum().backward()
    assert maple.ctx.grad.abs().sum() > 0 and maple.deep.grad.abs().sum() > 0
    assert all(c.weight.grad.abs().sum() > 0 for c in maple.couplings)


def test_training_coop_lowers_its_loss(clip):
    y = torch.arange(12) % 3
    images = torch.stack([torch.full((3, 16, 16), 0.0), torch.full((3, 16, 16), 1.0), torch.rand(3, 16, 16)])[y]
    tokens = clip.image.tokens(images)  # three very different images, one per class
    coop = CoOp(clip, n_ctx=4)
    history = train_prompt(coop, clip, tokens, y, NAMES, steps=15, lr=1e-2, seed=0)
    assert history[-1]["ce"] < 0.8 * history[0]["ce"]


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda c: CoOp(c, n_ctx=0), "n_ctx"),
        (lambda c: MaPLe(c, n_ctx=-1), "n_ctx"),
        (lambda c: MaPLe(c, depth=3), "depth"),
        (lambda c: MaPLe(c, depth=0), "depth"),
    ],
)
def test_bad_prompt_shapes(clip, make, named):
    with pytest.raises(ValueError, match=f"^{named}="):
        make(clip)
