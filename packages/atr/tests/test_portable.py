"""The portable ops equal torch's own functions up to rounding, forward and backward (``tests/test_kernel_paths.py``
checks that they give the same bits on torch's default kernels)."""

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from icml26_atr.model import Block
from icml26_atr.portable import AdamW, LayerNorm, gelu, log_softmax, softmax
from torch import nn


def draw(*shape, seed=0):
    return 3 * torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def grads(fn, x):
    x = x.clone().requires_grad_(True)
    y = fn(x)
    y.backward(draw(*y.shape, seed=1))
    return y.detach(), x.grad


@pytest.mark.parametrize(
    ("ours", "torchs"),
    [
        (softmax, lambda x: F.softmax(x, -1)),
        (log_softmax, lambda x: F.log_softmax(x, -1)),
        (gelu, F.gelu),
        (LayerNorm(32, dtype=torch.float64), nn.LayerNorm(32, dtype=torch.float64)),
    ],
)
def test_ops_equal_torchs_forward_and_backward(ours, torchs):
    x = draw(4, 7, 32)
    (y, gx), (y_ref, gx_ref) = grads(ours, x), grads(torchs, x)
    assert torch.allclose(y, y_ref, rtol=0, atol=1e-12)
    assert torch.allclose(gx, gx_ref, rtol=0, atol=1e-12)


def test_layer_norm_with_weights_and_a_masked_softmax_equal_torchs():
    ours, ref = LayerNorm(32, dtype=torch.float64), nn.LayerNorm(32, dtype=torch.float64)
    with torch.no_grad():
        for module in (ours, ref):
            module.weight.copy_(draw(32, seed=2))
            module.bias.copy_(draw(32, seed=3))
    assert torch.allclose(ours(draw(5, 32)), ref(draw(5, 32)), rtol=0, atol=1e-12)
    scores = draw(6, 6).masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf"))
    assert torch.allclose(softmax(scores), F.softmax(scores, -1), rtol=0, atol=1e-15)


def test_adamw_follows_torchs_adamw():
    start = draw(10, 4)
    params = [nn.Parameter(start.clone()), nn.Parameter(start.clone())]
    ours, ref = AdamW([params[0]], lr=3e-2, weight_decay=0.1), torch.optim.AdamW([params[1]], lr=3e-2, weight_decay=0.1)
    for step in range(6):
        for p, optimizer in zip(params, (ours, ref), strict=True):
            optimizer.zero_grad()
            (p.sin() * draw(10, 4, seed=10 + step)).sum().backward()
            optimizer.step()
    assert not torch.allclose(params[0], start, atol=1e-2)
    assert torch.allclose(params[0], params[1], rtol=0, atol=1e-12)


def test_block_is_torchs_pre_norm_transformer_layer():
    """The same function as ``nn.TransformerEncoderLayer`` given its weights (key bias 0: softmax ignores it)."""
    d, heads = 16, 4
    block = Block(d, heads, torch.float64)
    ref = nn.TransformerEncoderLayer(
        d, heads, 2 * d, dropout=0.0, activation="gelu", batch_first=True, norm_first=True, dtype=torch.float64
    )
    with torch.no_grad():
        for linear in (block.query, block.value, block.out, block.linear1, block.linear2):
            linear.bias.copy_(draw(*linear.bias.shape, seed=4))
        ref.self_attn.in_proj_weight.copy_(torch.cat([block.query.weight, block.key.weight, block.value.weight]))
        ref.self_attn.in_proj_bias.copy_(torch.cat([block.query.bias, draw(d, seed=5), block.value.bias]))
        ref.self_attn.out_proj.load_state_dict(block.out.state_dict())
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(ref, name).load_state_dict(getattr(block, name).state_dict())
    x, causal = draw(3, 9, d), nn.Transformer.generate_square_subsequent_mask(9, dtype=torch.float64)
    assert torch.allclose(block(x), ref(x), rtol=0, atol=1e-10)
    assert torch.allclose(block(x, causal), ref(x, src_mask=causal, is_causal=True), rtol=0, atol=1e-10)


def test_adamw_leaves_torch_dynamo_unimported():
    """torch.optim.Optimizer imports torch._dynamo when built: 3.4 CPU s in every process that trains (issue 28)."""
    code = (
        "import sys, torch; from icml26_atr.portable import AdamW; "
        "AdamW([torch.zeros(2, requires_grad=True)]); print('torch._dynamo' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(("kwargs", "name"), [({"params": []}, "params"), ({"lr": 0.0}, "lr")])
def test_adamw_rejects_bad_settings(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        AdamW(**({"params": [torch.zeros(2, requires_grad=True)]} | kwargs))
