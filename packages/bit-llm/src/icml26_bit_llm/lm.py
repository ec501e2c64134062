"""The frozen language model: a tiny Llama pretrained in-repo on the captions (quick), or SmolLM2 (paper).

Both are ``transformers`` causal LMs of the Llama architecture with a tokenizer of the ``transformers``
interface, so the adapters, the prefix baseline and the training stages have one code path.
"""

from __future__ import annotations

import torch
from icml26_shared import cached, check_int, check_positive, fail, fingerprint, get_logger
from icml26_shared import load_smollm2 as shared_load_smollm2
from torch.nn import functional as F
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from .data import COLOURS, RELATIONS, SHAPES

IGNORE_INDEX = -100  # label of the prompt (and padding) positions: no loss there
PROMPT = "describe the scene"
SPECIAL = {"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
log = get_logger("bit-llm")


def word_tokenizer(extra_text: str = PROMPT) -> PreTrainedTokenizerFast:
    """A word-level tokenizer over the grammar's words and the prompt (``tokenizers`` WordLevel model)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = sorted({w for phrase in (*COLOURS, *SHAPES, *RELATIONS, "a", extra_text) for w in phrase.split()})
    vocab = {tok: i for i, tok in enumerate([*SPECIAL.values(), *words])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token=SPECIAL["unk_token"]))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=backend, clean_up_tokenization_spaces=False, **SPECIAL)


def tiny_llama(vocab_size: int, dim: int = 64, layers: int = 2, heads: int = 4, context: int = 32, seed: int = 0):
    """A randomly initialised tiny ``LlamaForCausalLM`` (the architecture of SmolLM2, at toy size)."""
    check_int("vocab_size", vocab_size, 2)
    check_int("context", context, 2)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=dim,
        intermediate_size=4 * dim,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=context,
        tie_word_embeddings=True,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def encode(tokenizer, prompt: str, captions: list[str], context: int, prefix: int = 0):
    """Token ids (b, L) of [bos] prompt caption [eos] (right-padded) and labels with the prompt masked.

    ``prefix`` soft tokens will precede the text (prefix baseline): they count against ``context``. A caption
    that does not fit is refused, never truncated.
    """
    if not captions:
        raise fail("captions", captions, "at least one caption")
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    head = [*bos, *tokenizer.encode(prompt, add_special_tokens=False)]
    rows = []
    for caption in captions:
        body = [*tokenizer.encode(" " + caption, add_special_tokens=False), tokenizer.eos_token_id]
        if prefix + len(head) + len(body) > context:
            raise fail(
                "captions",
                caption,
                f"a caption that fits the LM's context: {prefix} prefix + {len(head)} prompt + {len(body)} "
                f"caption tokens > {context}",
            )
        rows.append(body)
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    ids = torch.full((len(rows), len(head) + width), pad, dtype=torch.long)
    labels = torch.full_like(ids, IGNORE_INDEX)
    ids[:, : len(head)] = torch.tensor(head)
    for i, r in enumerate(rows):
        ids[i, len(head) : len(head) + len(r)] = torch.tensor(r)
        labels[i, len(head) : len(head) + len(r)] = torch.tensor(r)
    return ids, labels


def shifted_ce(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy on the labelled (caption) positions only."""
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(), ignore_index=IGNORE_INDEX)


def pretrain_tiny_lm(corpus: list[str], steps: int, dim: int, layers: int, context: int, lr: float, seed: int):
    """Pretrain the tiny Llama on ``corpus`` as plain text (next-token loss on every token), then freeze it.

    The state dict is cached through ``icml26_shared.cached`` under a key of everything it depends on.
    """
    check_int("steps", steps, 1)
    check_positive("lr", lr)
    tokenizer = word_tokenizer()
    model = tiny_llama(len(tokenizer), dim, layers, context=context, seed=seed)
    key = fingerprint(
        {
            "corpus": fingerprint(corpus),
            "steps": steps,
            "dim": dim,
            "layers": layers,
            "lr": lr,
            "context": context,
            "seed": seed,
            "vocab": tokenizer.get_vocab(),
        }
    )

    def build() -> dict[str, torch.Tensor]:
        log.info("pretraining the tiny LM on %d captions (%d steps)", len(corpus), steps)
        generator = torch.Generator().manual_seed(seed)
        ids, labels = encode(tokenizer, "", corpus, context)  # no prompt: the loss covers the whole text
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        for _ in range(steps):
            batch = torch.randint(len(ids), (64,), generator=generator)
            loss = shifted_ce(model(input_ids=ids[batch], use_cache=False).logits, labels[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return {k: v.detach().clone() for k, v in model.state_dict().items()}

    model.load_state_dict(cached(f"bit-llm/tiny-lm-{key}", build))
    return freeze(model), tokenizer


def load_smollm2():
    """SmolLM2-135M-Instruct (float32, eval mode, frozen) and its tokenizer, through the shared loader.

    Needs the ``llm`` extra (``icml26-bit-llm[llm]``); without it the shared loader's error names what to install.
    """
    model, tokenizer = shared_load_smollm2()
    return freeze(model), tokenizer


def freeze(model):
    """Eval mode, no gradients: the backbone LLM stays frozen in every stage."""
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def context_length(model) -> int:
    return int(model.config.max_position_embeddings)
