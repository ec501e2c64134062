"""The LMM hook: a ChatModel as the agent, through a scripted model and the OpenAI-compatible client on the
loopback (no real network)."""

import base64

import pytest
from icml26_recap import CaptchaEnv, ChatPolicy, run_episodes
from icml26_recap.lmm import describe_context, png_bytes
from icml26_shared import ChatCompletionsClient, ChatError
from icml26_shared.testing import FakeChatServer


class ScriptedModel:
    """Answers with the scripted solver's action for the challenge it is shown (read from a live env)."""

    def __init__(self, env, prefix=""):
        self.env, self.prefix, self.seen = env, prefix, []

    def chat(self, messages):
        self.seen.append(messages)
        return f"{self.prefix}Thought: {self.env.oracle()[1]}\nAction: {self.env.oracle()[0].to_string()}"


def test_chat_policy_solves_with_a_perfect_model_and_sees_the_screenshot():
    env = CaptchaEnv("rotation", seed=4)
    obs = env.reset()
    model = ScriptedModel(env, prefix="Reflection: none\n")
    actions, reflections = ChatPolicy(model).act([obs], describe_context_input())
    assert env.step(actions[0]).status == "solved" and reflections == ["none"]
    text, image = model.seen[0][1]["content"]
    assert "drag knob to rotate upright" in text["text"]
    assert base64.b64decode(image["image_url"]["url"].split(",", 1)[1]) == png_bytes(obs.image)


def describe_context_input():
    import numpy as np
    from icml26_recap import encode_context

    return np.stack([encode_context(None, "none", 0, 64, 5)])


def test_context_in_words():
    from icml26_recap import Action, encode_context

    text = describe_context(encode_context(Action("drag", 8, 30, 40, 30), "wrong", 1, 64, 5), 64)
    assert text == "The previous action was a drag from (8,30) to (40,30); the challenge answered: wrong."


class Nonsense:
    def chat(self, messages):
        return "I would rather not."


def test_unparsed_answers_are_recorded_invalid_attempts(tmp_path):
    log = tmp_path / "episodes.jsonl"
    episodes = run_episodes(ChatPolicy(Nonsense()), "text", 2, seed=0, t_max=2, log_path=log)
    assert [e.statuses for e in episodes] == [["invalid", "invalid"]] * 2
    assert len(log.read_text().splitlines()) == 2


def test_chat_policy_rejects_a_non_chat_model():
    with pytest.raises(ValueError, match="model="):
        ChatPolicy(object())


def test_openai_compatible_endpoint_on_the_loopback():
    with FakeChatServer([(200, "Action: type(content='123')"), (200, b"{not json")]) as server:
        policy = ChatPolicy(ChatCompletionsClient(server.base_url, "fake-vlm", max_retries=0))
        env = CaptchaEnv("type_field", seed=0)
        actions, _ = policy.act([env.reset()], describe_context_input())
        assert actions[0].to_string() == "type(content='123')"
        with pytest.raises(ChatError, match="without a chat completion"):
            policy.act([env.observation], describe_context_input())
    sent = server.requests[0][2]["messages"][1]["content"]
    assert [part["type"] for part in sent] == ["text", "image_url"]


def test_unreachable_endpoint_is_a_clear_error(tmp_path):
    log = tmp_path / "episodes.jsonl"
    client = ChatCompletionsClient("http://127.0.0.1:9/v1", "fake-vlm", max_retries=0, timeout_s=2)
    with pytest.raises(ChatError, match="127.0.0.1:9"):
        run_episodes(ChatPolicy(client), "slider", 1, seed=0, log_path=log)
    assert not log.exists()  # nothing finished, nothing half-written
