"""The prefix (soft-prompt) decoder, the language prior and retrieval."""

import numpy as np
import pytest
import torch
from icml26_bit_llm.baselines import LanguagePrior, PrefixDecoder, retrieve_captions
from icml26_bit_llm.data import captions, sample_scenes
from icml26_bit_llm.lm import freeze, tiny_llama, word_tokenizer

CAPTIONS = [captions(s)[0] for s in sample_scenes(3, np.random.default_rng(1))]


def tiny_lm(context: int = 32, layers: int = 2):
    """A tiny random frozen Llama with the word tokenizer (no training, no cache)."""
    tokenizer = word_tokenizer()
    return freeze(tiny_llama(len(tokenizer), dim=32, layers=layers, heads=4, context=context, seed=0)), tokenizer


def test_prefix_logits_cover_the_text_positions_and_depend_on_the_memory():
    lm, tokenizer = tiny_lm()
    torch.manual_seed(0)
    prefix = PrefixDecoder(lm, tokenizer, d_memory=8, n_tokens=4)
    ids, _ = prefix.encode(CAPTIONS)
    with torch.no_grad():
        a, b = prefix.logits(ids, torch.randn(3, 4, 8)), prefix.logits(ids, torch.randn(3, 4, 8))
    assert a.shape == (*ids.shape, len(tokenizer))
    assert (a - b).abs().max() > 1e-4
    loss = prefix.loss(torch.randn(3, 4, 8), CAPTIONS)
    loss.backward()
    assert prefix.project[0].weight.grad is not None and lm.model.embed_tokens.weight.grad is None


def test_prefix_positions_get_no_logits():
    """The LM head (vocabulary-sized: a fifth of SmolLM2's work per position) runs on the text positions only;
    their logits are those of the full forward."""
    lm, tokenizer = tiny_lm()
    torch.manual_seed(0)
    prefix = PrefixDecoder(lm, tokenizer, d_memory=8, n_tokens=4)
    ids, _ = prefix.encode(CAPTIONS)
    memory = torch.randn(3, 4, 8)
    rows = []
    lm.lm_head.register_forward_hook(lambda module, args, out: rows.append(args[0].shape[1]))
    with torch.no_grad():
        logits = prefix.logits(ids, memory)
        embed = lm.get_input_embeddings()(ids)
        x = torch.cat([embed[:, :1], prefix.project(memory), embed[:, 1:]], dim=1)
        full = lm(inputs_embeds=x, use_cache=False).logits
    assert rows[0] == ids.shape[1]  # not ids.shape[1] + 4
    torch.testing.assert_close(logits, torch.cat([full[:, :1], full[:, 5:]], dim=1), rtol=1e-5, atol=1e-5)


def test_prefix_tokens_count_against_the_context():
    lm, tokenizer = tiny_lm(context=16)
    prefix = PrefixDecoder(lm, tokenizer, d_memory=8, n_tokens=8)
    with pytest.raises(ValueError, match="captions="):
        prefix.loss(torch.randn(1, 8, 8), ["a red circle left of a blue square"])  # 8 + 4 + 9 > 16


def test_language_prior_ignores_the_memory():
    lm, tokenizer = tiny_lm()
    prior = LanguagePrior(lm, tokenizer)
    assert prior.caption(torch.randn(2, 4, 8), 6) == prior.caption(torch.zeros(2, 4, 8), 6)
    assert len(set(prior.caption(torch.randn(3, 4, 8), 6))) == 1


def test_retrieval_is_the_nearest_neighbour_by_cosine():
    keys = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    query = torch.tensor([[0.1, 2.0], [-3.0, 0.5], [5.0, 1.0]])
    assert retrieve_captions(query, keys, ["x", "y", "z"]) == ["y", "z", "x"]
