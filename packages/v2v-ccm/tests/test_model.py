"""The tiny V2V MLLM: masking equals deleting tokens, shapes, positional code, training reduces the loss."""

import numpy as np
import torch
from icml26_v2v_ccm import CooperativeQA, Inputs, augmentation_mask, batch_inputs, make_dataset, sinusoidal_2d, train


def _setup():
    data = make_dataset(6, seed=0, grid=16, patch=4, lidar_range=10.0)
    torch.manual_seed(0)
    model = CooperativeQA(data.tokens.shape[-1], grid=16).eval()
    inputs, answer = batch_inputs(model, data, np.arange(6), np.arange(6) % 4)
    return data, model, inputs, answer


def test_masked_tokens_are_the_same_as_deleted_tokens():
    _, model, inputs, _ = _setup()
    keep = torch.ones(inputs.visual.shape[:3], dtype=torch.bool)
    keep[0, 1, [0, 3, 7]] = False
    keep[0, 2, 5:] = False
    logits, _ = model(Inputs(*(t[:1] for t in inputs)), keep[:1])
    flat = keep[0].flatten()
    question, visual, positions = (t[:1] for t in inputs)
    kept_positions = torch.cat([positions[:, :2], positions[:, 2:][:, flat]], 1)
    x = torch.cat([question, visual.flatten(1, 2)[:, flat]], 1)
    bias = -torch.nn.functional.softplus(model.slope)[:, None, None] * torch.cdist(kept_positions, kept_positions)
    mask = torch.ones(1, x.shape[1], dtype=torch.bool)
    for block in model.blocks:
        x, _ = block(x, mask, bias[None])
    torch.testing.assert_close(logits, model.head(model.norm(x[:, 0])))


def test_shapes_and_attention_rows_sum_to_one():
    data, model, inputs, _ = _setup()
    keep = torch.ones(inputs.visual.shape[:3], dtype=torch.bool)
    logits, attentions = model(inputs, keep)
    a, n = data.tokens.shape[1:3]
    assert logits.shape == (6, 5) and len(attentions) == 2
    assert attentions[0].shape == (6, 4, 2 + a * n, 2 + a * n)
    torch.testing.assert_close(attentions[1].sum(-1), torch.ones(6, 4, 2 + a * n))
    assert model.relevance(model.qsm(inputs.question), inputs.visual[:, 1:]).shape == (6, a - 1, n)


def test_sinusoidal_code_separates_patch_centres():
    centres = torch.tensor([[x + 2.0, y + 2.0] for x in range(0, 32, 4) for y in range(0, 32, 4)])
    code = sinusoidal_2d(centres, 32, 32)
    distance = torch.cdist(code, code) + torch.eye(len(centres)) * 10
    assert distance.min() > 0.1  # no two patch centres share a code


def test_augmentation_keeps_ego_and_drops_only_cav_tokens():
    keep = augmentation_mask((400, 3, 16), torch.Generator().manual_seed(0))
    assert keep[:, 0].all()
    per_sample = keep[:, 1:].flatten(1).sum(1)
    assert set(per_sample.tolist()) <= {0, 4, 8, 16, 32}  # rho in {0, 1/8, 1/4, 1/2, 1} x 2 CAVs x 16
    assert 0.4 < (per_sample == 32).float().mean() < 0.7


def test_training_lowers_the_loss():
    data = make_dataset(100, seed=1, grid=16, patch=4, lidar_range=10.0)
    torch.manual_seed(0)
    model = CooperativeQA(data.tokens.shape[-1], grid=16)
    losses = train(model, data, steps=80, batch_size=16, lr=3e-3, seed=0)
    assert np.mean(losses[-20:]) < np.mean(losses[:5]) - 0.3  # measured: 1.96 -> 1.33 at 150 steps
