"""BIT-LLM's gated cross-attention adapters on a frozen Llama, decoding, and the SCST loss."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_bit_llm.baselines import LanguagePrior, PrefixDecoder
from icml26_bit_llm.data import captions, sample_scenes
from icml26_bit_llm.lm import freeze, tiny_llama, word_tokenizer
from icml26_bit_llm.method import BitLLM, GatedCrossAttention, scst_loss

CAPTIONS = [captions(s)[0] for s in sample_scenes(4, np.random.default_rng(0))]


def tiny_lm(context: int = 32, layers: int = 2):
    """A tiny random frozen Llama with the word tokenizer (no training, no cache)."""
    tokenizer = word_tokenizer()
    return freeze(tiny_llama(len(tokenizer), dim=32, layers=layers, heads=4, context=context, seed=0)), tokenizer


def _model(interval=1, layers=2):
    lm, tokenizer = tiny_lm(layers=layers)
    torch.manual_seed(0)
    return BitLLM(lm, tokenizer, d_memory=8, interval=interval, heads=2, dim_head=8)


def test_zero_gates_leave_the_frozen_lm_unchanged():
    """tanh(0) = 0: at initialisation the adapted LM computes exactly the frozen LM's logits."""
    model = _model()
    ids, _ = model.encode(CAPTIONS)
    plain = model.lm(input_ids=ids, use_cache=False).logits  # no memory bound: hooks are inactive
    with model.memory_scope(torch.randn(4, 5, 8)):
        adapted = model.logits(ids, None)
    assert torch.equal(plain, adapted)
    assert torch.equal(model.gates, torch.zeros(2, 2))


def test_open_gates_make_the_lm_read_the_memory():
    model = _model()
    with torch.no_grad():
        for a in model.adapters:
            a.attn_gate.fill_(1.0)
    ids, _ = model.encode(CAPTIONS)
    m1, m2 = torch.randn(4, 5, 8), torch.randn(4, 5, 8)
    with torch.no_grad():
        with model.memory_scope(m1):
            a = model.logits(ids, m1)
        with model.memory_scope(m2):
            b = model.logits(ids, m2)
    assert (a - b).abs().max() > 1e-3


@pytest.mark.parametrize(("interval", "expected"), [(1, [0, 1, 2, 3]), (2, [0, 2]), (4, [0])])
def test_adapters_before_every_interval_th_layer(interval, expected):
    assert _model(interval, layers=4).where == expected


@pytest.mark.parametrize("interval", [0, 5])
def test_interval_outside_the_layers_is_refused(interval):
    lm, tokenizer = tiny_lm(layers=4)
    with pytest.raises(ValueError, match="interval="):
        BitLLM(lm, tokenizer, 8, interval=interval)


def test_memory_keys_values_are_computed_once_per_caption(monkeypatch):
    """Persistent memory: one K/V projection per adapter for a whole greedy decode, not one per token."""
    model = _model()
    calls = []
    original = GatedCrossAttention.memory_kv
    monkeypatch.setattr(GatedCrossAttention, "memory_kv", lambda self, m: calls.append(1) or original(self, m))
    model.generate(torch.randn(2, 5, 8), max_new_tokens=6)
    assert len(calls) == len(model.adapters)


def test_greedy_decoding_agrees_with_teacher_forced_logprobs():
    """Each greedy token is the argmax of the teacher-forced distribution at its position."""
    model = _model()
    with torch.no_grad():
        for a in model.adapters:
            a.attn_gate.fill_(0.5)
    memory = torch.randn(3, 5, 8)
    generated = model.generate(memory, max_new_tokens=6)
    prompt = model.prompt_ids(3)
    with torch.no_grad(), model.memory_scope(memory):
        logits = model.logits(torch.cat([prompt, generated], 1), memory)[:, prompt.shape[1] - 1 : -1]
    _, mask = model.token_logprobs(memory, generated)
    assert torch.equal(logits.argmax(-1)[mask], generated[mask])


def _decoder(kind: str):
    """A decoder whose captions depend on positions and (BitLLM, prefix) on each row's memory.

    The frozen random LM's weights are scaled 10x, so its attention is sharp and the positions and the cache
    matter (at initialisation scale, setting every position id to 0 moves its logits by about 1e-5); BitLLM's
    gates are open. A word of the random LM plays eos, so that some rows of a batch end early and others do not.
    """
    lm, tokenizer = tiny_lm()
    tokenizer.eos_token = "yellow"
    with torch.no_grad():
        for p in lm.parameters():
            p.mul_(10 if p.ndim == 2 else 1)
    torch.manual_seed(0)
    if kind == "prior":
        return LanguagePrior(lm, tokenizer)
    if kind == "prefix":
        return PrefixDecoder(lm, tokenizer, d_memory=8, n_tokens=5)
    model = BitLLM(lm, tokenizer, d_memory=8, interval=1, heads=2, dim_head=8)
    with torch.no_grad():
        for a in model.adapters:
            a.attn_gate.fill_(1.0)
            a.ff_gate.fill_(1.0)
    return model


def _uncached_decode(decoder, memory, max_new_tokens, sample, generator):
    """Reference: decoding that runs the whole sequence through the LM at every step; (tokens, last logits)."""
    ids = decoder.prompt_ids(len(memory))
    eos, start, done, steps = decoder.tokenizer.eos_token_id, ids.shape[1], torch.zeros(len(ids), dtype=bool), []
    with torch.no_grad(), decoder.memory_scope(memory):
        for _ in range(max_new_tokens):
            steps.append(decoder.logits(ids, memory)[:, -1])
            if sample:
                token = torch.multinomial(torch.softmax(steps[-1], dim=-1), 1, generator=generator)[:, 0]
            else:
                token = steps[-1].argmax(dim=-1)
            token = torch.where(done, torch.full_like(token, eos), token)
            ids = torch.cat([ids, token[:, None]], dim=1)
            done |= token == eos
            if done.all():
                break
    out = ids[:, start:]
    return torch.nn.functional.pad(out, (0, max_new_tokens - out.shape[1]), value=eos), steps


@pytest.mark.parametrize("kind", ["bitllm", "prefix", "prior"])
@pytest.mark.parametrize("sample", [False, True])
def test_cached_decoding_gives_the_tokens_of_the_uncached_one(kind, sample, monkeypatch):
    """The KV cache is exact: the same tokens (greedy, and sampled with one generator seed) and the same
    next-token logits at every step as re-running the whole sequence, for a batch whose rows end at different
    steps (a finished row is fed eos)."""
    decoder = _decoder(kind)
    memory = torch.randn(8, 5, 8, generator=torch.Generator().manual_seed(1))
    expected, expected_logits = _uncached_decode(decoder, memory, 12, sample, torch.Generator().manual_seed(0))
    cached_logits = []
    logits = decoder.logits
    monkeypatch.setattr(decoder, "logits", lambda *a: cached_logits.append(logits(*a)) or cached_logits[-1])
    got = decoder.generate(memory, 12, sample=sample, generator=torch.Generator().manual_seed(0))
    assert torch.equal(got, expected)
    last = torch.stack([step[:, -1] for step in cached_logits])
    torch.testing.assert_close(last, torch.stack(expected_logits), rtol=1e-4, atol=1e-4)
    if sample or kind != "prior":  # the case under test: some rows end early, others run to max_new_tokens
        ended = (got == decoder.tokenizer.eos_token_id).any(dim=1)
        assert ended.any() and not ended.all(), got


def test_cached_decoding_feeds_the_adapters_one_new_token_per_step(monkeypatch):
    """After the prompt, each step runs only the new token through the LM: the adapters see (b, 1, d) hidden
    states (the uncached path re-ran the whole sequence, (b, prompt + step, d))."""
    model = _model()
    seen, forward = [], GatedCrossAttention.forward
    monkeypatch.setattr(
        GatedCrossAttention, "forward", lambda self, x, kv: seen.append(x.shape) or forward(self, x, kv)
    )
    model.generate(torch.randn(3, 5, 8), max_new_tokens=6)
    prompt, n = model.prompt_ids(1).shape[1], len(model.adapters)
    assert len(seen) == 6 * n  # the frozen random LM never emits eos here: 6 steps
    assert seen[:n] == [(3, prompt, model.dim)] * n
    assert seen[n:] == [(3, 1, model.dim)] * (5 * n)


def test_training_only_moves_the_interface():
    model = _model()
    before = {k: v.clone() for k, v in model.lm.state_dict().items()}
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-2)
    for _ in range(3):
        loss = model.loss(torch.randn(4, 5, 8), CAPTIONS)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert all(torch.equal(before[k], v) for k, v in model.lm.state_dict().items())
    assert model.gates.abs().max() > 0


@given(advantage=st.floats(-2, 2))
def test_scst_loss_is_the_advantage_weighted_logprob(advantage):
    """L = -(r(y^s) - r(y^g)) * mean_t log pi(y^s_t | y^s_<t, M), y^s sampled, y^g greedy."""
    model = _model()
    memory = torch.randn(2, 5, 8)
    rewards = iter([np.array([advantage, 0.0]), np.array([0.0, 0.0])])  # sampled captions first, then greedy
    loss, mean_reward = scst_loss(
        model, memory, [["a"], ["b"]], lambda r, c: next(rewards), 6, torch.Generator().manual_seed(0)
    )
    sampled = model.generate(memory, 6, sample=True, generator=torch.Generator().manual_seed(0))
    logp, mask = model.token_logprobs(memory, sampled)
    expected = -(advantage * (logp[0] * mask[0]).sum()) / mask.sum()
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
    assert mean_reward == pytest.approx(advantage / 2)


def test_bad_decoding_arguments():
    model = _model()
    with pytest.raises(ValueError, match="max_new_tokens="):
        model.generate(torch.randn(1, 5, 8), max_new_tokens=0)
    with pytest.raises(ValueError, match="max_new_tokens="):
        model.generate(torch.randn(1, 5, 8), max_new_tokens=100)  # beyond the LM's context of 32
    with pytest.raises(ValueError, match="memory="):
        model.loss(torch.randn(2, 5, 8), CAPTIONS)  # 2 memories for 4 captions
    with pytest.raises(ValueError, match="memory="):
        model.loss(torch.randn(4, 8), CAPTIONS)
