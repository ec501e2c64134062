"""The LLM meta-planner: a chat model writes the planning system's configuration as text.

The official meta-planner (Todo-14B) answers a task with an analysis, a ``PlannerPlanning`` Python class and YAML
prompts. Here the "program" is the configuration in four ``axis: value`` lines (``PlannerConfig.render``), parsed
by ``factory.parse_config``; a reply that does not parse is a failed attempt, recorded, not an exception.

* ``ChatMetaPlanner`` proposes with any ``icml26_shared.chat.ChatModel``: an OpenAI-compatible endpoint
  (``ChatCompletionsClient``), SmolLM2 (``LocalChatModel``) or a scripted policy.
* ``sequence_log_prob``, ``train_text_sft`` and ``train_text_dpo`` fine-tune a local causal LM (SmolLM2-135M-Instruct
  in the paper config) with the same SFT -> IGPO recipe as the small policy: full fine-tuning on CPU.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icml26_shared import check_int, check_positive, fail
from icml26_shared.chat import ChatModel

from .factory import AXES, ParseError, PlannerConfig, parse_config
from .method import DPO_BETA, dpo_loss

SYSTEM_PROMPT = (
    "You are a meta-planner. For the task below, design the planning system an agent should use. "
    "Answer with exactly four lines:\n"
    + "\n".join(f"{axis}: one of {', '.join(values)}" for axis, values in AXES.items())
)


def messages(task_text: str) -> list[dict[str, str]]:
    """The chat messages a meta-planner answers for one task (its ``plan_model_input``)."""
    if not isinstance(task_text, str) or not task_text.strip():
        raise fail("task_text", task_text, "a non-empty task description")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task_text}]


@dataclass(frozen=True)
class Proposal:
    """One meta-planner generation: the raw text and the configuration, or the reason it did not parse."""

    text: str
    config: PlannerConfig | None
    error: str = ""


class ChatMetaPlanner:
    """Proposes a configuration per task with a ``ChatModel``; a reply that does not parse gives a Proposal with
    ``config=None`` and the parse error (a failed attempt). Transport failures (``ChatError``) propagate."""

    def __init__(self, chat: ChatModel) -> None:
        if not isinstance(chat, ChatModel):
            raise fail("chat", type(chat).__name__, "a ChatModel (an object with chat(messages) -> str)")
        self.chat = chat

    def propose(self, task_text: str) -> Proposal:
        text = self.chat.chat(messages(task_text))
        try:
            return Proposal(text, parse_config(text))
        except ParseError as err:
            return Proposal(text if isinstance(text, str) else repr(text), None, str(err))


def _prompt_ids(tokenizer: Any, task_text: str) -> list[int]:
    ids = tokenizer.apply_chat_template(messages(task_text), add_generation_prompt=True)
    return list(ids["input_ids"] if isinstance(ids, Mapping) else ids)


def sequence_log_prob(model: Any, tokenizer: Any, task_text: str, reply: str):
    """log p(reply + EOS | chat prompt of the task) under a causal LM: a 0-d torch tensor (with grad if enabled)."""
    import torch

    if not isinstance(reply, str) or not reply:
        raise fail("reply", reply, "a non-empty reply text")
    prompt = _prompt_ids(tokenizer, task_text)
    answer = [*list(tokenizer.encode(reply, add_special_tokens=False)), tokenizer.eos_token_id]
    ids = torch.tensor([prompt + answer], dtype=torch.long)
    logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1]  # position t predicts token t + 1
    return torch.log_softmax(logits.float(), dim=-1).gather(1, ids[0, len(prompt) :, None]).sum()


def _batch_log_prob(model: Any, tokenizer: Any, examples: Sequence[tuple[str, str]]):
    import torch

    return torch.stack([sequence_log_prob(model, tokenizer, x, y) for x, y in examples])


def train_text_sft(
    model: Any, tokenizer: Any, examples: Sequence[tuple[str, str]], epochs: int = 1, lr: float = 1e-5, batch: int = 4
) -> list[float]:
    """SFT of ``model`` in place on (task text, successful configuration text) pairs: minimise -log p(y | x)."""
    import torch

    check_int("epochs", epochs, 1)
    check_int("batch", batch, 1)
    check_positive("lr", lr)
    if not examples:
        raise fail("examples", examples, "at least one (task text, reply) example")
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        for start in range(0, len(examples), batch):
            loss = -_batch_log_prob(model, tokenizer, examples[start : start + batch]).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
    model.eval()
    return losses


def train_text_dpo(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[Mapping[str, str]],
    beta: float = DPO_BETA,
    epochs: int = 1,
    lr: float = 5e-7,
    batch: int = 4,
) -> tuple[Any, list[float]]:
    """IGPO: DPO of a copy of ``model`` on ``pairs`` ({"instruction", "chosen", "rejected"}) against ``model``
    frozen as the reference (the SFT model). Returns the trained copy and the loss per batch."""
    import torch

    check_positive("beta", beta)
    check_int("epochs", epochs, 1)
    check_int("batch", batch, 1)
    check_positive("lr", lr)
    if not pairs:
        raise fail("pairs", pairs, "at least one preference pair")
    chosen = [(p["instruction"], p["chosen"]) for p in pairs]
    rejected = [(p["instruction"], p["rejected"]) for p in pairs]
    with torch.no_grad():
        ref_chosen = _batch_log_prob(model, tokenizer, chosen)
        ref_rejected = _batch_log_prob(model, tokenizer, rejected)
    policy = copy.deepcopy(model).train()
    optimiser = torch.optim.AdamW(policy.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        for start in range(0, len(pairs), batch):
            part = slice(start, start + batch)
            loss = dpo_loss(
                _batch_log_prob(policy, tokenizer, chosen[part]),
                _batch_log_prob(policy, tokenizer, rejected[part]),
                ref_chosen[part],
                ref_rejected[part],
                beta,
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
    return policy.eval(), losses
