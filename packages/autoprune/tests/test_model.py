"""The decoder-LM path on tiny random transformers models (no weights needed): Llama and Gemma-3."""

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="needs the llm extra: pip install 'icml26-autoprune[llm]'")

from icml26_autoprune import WANDA, block_inputs, decoder_blocks, prune_lm  # noqa: E402
from icml26_autoprune.pruning import _call  # noqa: E402


def tiny(kind: str) -> torch.nn.Module:
    """A random 3-block model; Gemma-3's middle block is a global-attention layer, the others sliding-window."""
    torch.manual_seed(0)
    common = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2)
    if kind == "llama":
        config = transformers.LlamaConfig(**common, num_key_value_heads=1)
        return transformers.LlamaForCausalLM(config).eval()
    config = transformers.Gemma3TextConfig(
        **common,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
    )
    return transformers.Gemma3ForCausalLM(config).eval()


@pytest.mark.parametrize("kind", ["llama", "gemma3"])
def test_block_by_block_reproduces_the_model(kind):
    """Each block called with the hidden state and the arguments block_inputs captured gives the model's own
    block output (Gemma-3's global layer needs its own mask and rotary embedding, not block 0's)."""
    model = tiny(kind)
    tokens = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(1))
    blocks = decoder_blocks(model)
    outputs = []
    hooks = [
        b.register_forward_hook(lambda m, a, out: outputs.append(out[0] if isinstance(out, tuple) else out))
        for b in blocks
    ]
    with torch.no_grad():
        model(input_ids=tokens, use_cache=False)
    for hook in hooks:
        hook.remove()
    hidden, kwargs = block_inputs(model, tokens)
    assert len(kwargs) == len(blocks)
    with torch.no_grad():
        for index, block in enumerate(blocks):
            hidden = _call(block, hidden, kwargs[index])
            torch.testing.assert_close(hidden, outputs[index], rtol=1e-4, atol=1e-5)
    assert "forward" not in vars(blocks[0])  # the recorders are gone
    if kind == "gemma3":  # block 0's arguments (the pre-0.1.4 behaviour) do not reproduce the global layer
        with torch.no_grad():
            hidden_1 = _call(blocks[0], block_inputs(model, tokens)[0], kwargs[0])
            assert not torch.allclose(_call(blocks[1], hidden_1, kwargs[0]), outputs[1], rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("kind", ["llama", "gemma3"])
def test_prune_lm_on_a_tiny_model(kind):
    model = tiny(kind)
    tokens = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(1))
    result = prune_lm(model, tokens, 0.5, metric=WANDA, allocation="sdsa")
    assert abs(result.total_sparsity - 0.5) < 0.02
    assert len(result.masks) == 7 * 3  # q k v o gate up down, per block
    assert bool(torch.isfinite(model(input_ids=tokens).logits).all())
