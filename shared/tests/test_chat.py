"""ChatCompletionsClient against the shared fake OpenAI-compatible server on 127.0.0.1 (no real network)."""

import base64

import pytest
from icml26_shared import ChatCompletionsClient, ChatError, ChatModel
from icml26_shared.chat import PNG_SIGNATURE, check_messages, image_part
from icml26_shared.testing import FakeChatServer as FakeServer
from icml26_shared.testing import completion

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]


def client(server, **kw):
    sleeps = []
    kw = {"model": "fake-model", "max_retries": 2, "backoff_s": 0.5, "sleep": sleeps.append, **kw}
    return ChatCompletionsClient(server.base_url, **kw), sleeps


def test_success_sends_the_openai_request_and_returns_the_content():
    with FakeServer([(200, completion("Paris."))]) as server:
        chat, sleeps = client(server, api_key="sk-test", temperature=0.0, max_tokens=5)
        assert isinstance(chat, ChatModel)
        assert chat.chat(MESSAGES) == "Paris."
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body == {"model": "fake-model", "messages": MESSAGES, "temperature": 0.0, "max_tokens": 5}
    assert sleeps == []
    assert "sk-test" not in repr(chat)


def test_retries_429_and_5xx_with_exponential_backoff_then_succeeds():
    script = [(429, b"{}"), (503, b"{}"), (200, completion("ok"))]
    with FakeServer(script) as server:
        chat, sleeps = client(server)
        assert chat.chat(MESSAGES) == "ok"
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]  # backoff_s * 2**attempt


def test_gives_up_after_max_retries_naming_status_and_url():
    with FakeServer([(500, b"oops")] * 3) as server:
        chat, sleeps = client(server)
        with pytest.raises(ChatError, match=r"HTTP 500") as info:
            chat.chat(MESSAGES)
    assert chat.url in str(info.value)
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_4xx_is_an_error_at_once_naming_status_and_url():
    with FakeServer([(401, b'{"error": "bad key"}')]) as server:
        chat, sleeps = client(server)
        with pytest.raises(ChatError, match=r"HTTP 401") as info:
            chat.chat(MESSAGES)
    assert server.base_url in str(info.value) and "bad key" in str(info.value)
    assert len(server.requests) == 1 and sleeps == []


def test_timeout_is_retried_then_reported():
    with FakeServer([], hang=True) as server:
        chat, sleeps = client(server, timeout_s=0.2, max_retries=1)
        with pytest.raises(ChatError, match=r"failed after 2 attempts \(timeout 0.2 s each\)") as info:
            chat.chat(MESSAGES)
    assert server.base_url in str(info.value)
    assert len(sleeps) == 1


def test_connection_refused_is_reported():
    with FakeServer([]) as server:
        url = server.base_url
    chat = ChatCompletionsClient(url, model="m", max_retries=1, sleep=lambda s: None)
    with pytest.raises(ChatError, match="failed after 2 attempts"):
        chat.chat(MESSAGES)


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"choices": []}', b'{"choices": [{"message": {}}]}', b'{"choices": [{"message": {"content": 3}}]}'],
)
def test_malformed_answer_names_status_and_url(body):
    with FakeServer([(200, body)]) as server:
        chat, _ = client(server)
        with pytest.raises(ChatError, match=r"HTTP 200") as info:
            chat.chat(MESSAGES)
    assert chat.url in str(info.value)


def test_settings_come_from_the_environment(monkeypatch):
    with FakeServer([(200, completion("env"))]) as server:
        monkeypatch.setenv("ICML26_CHAT_BASE_URL", server.base_url + "/")
        monkeypatch.setenv("ICML26_CHAT_MODEL", "env-model")
        monkeypatch.setenv("ICML26_CHAT_API_KEY", "sk-env")
        chat = ChatCompletionsClient()
        assert chat.chat(MESSAGES) == "env"
    _, headers, body = server.requests[0]
    assert body["model"] == "env-model" and headers["Authorization"] == "Bearer sk-env"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"model": "m"}, "base_url"),
        ({"base_url": "http://127.0.0.1:1/v1"}, "model"),
        ({"base_url": "ftp://127.0.0.1/v1", "model": "m"}, "base_url"),
        ({"base_url": "127.0.0.1:8000", "model": "m"}, "base_url"),
        ({"base_url": "http://127.0.0.1:1/v1", "model": "m", "timeout_s": 0}, "timeout_s"),
        ({"base_url": "http://127.0.0.1:1/v1", "model": "m", "max_retries": -1}, "max_retries"),
        ({"base_url": "http://127.0.0.1:1/v1", "model": "m", "backoff_s": -1.0}, "backoff_s"),
    ],
)
def test_bad_settings_name_the_argument(monkeypatch, kwargs, name):
    for env in ("ICML26_CHAT_BASE_URL", "ICML26_CHAT_MODEL", "ICML26_CHAT_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    with pytest.raises(ValueError, match=f"^{name}="):
        ChatCompletionsClient(**kwargs)


@pytest.mark.parametrize(
    "messages",
    [
        "hello",
        [],
        [{"role": "robot", "content": "x"}],
        [{"role": "user", "content": 3}],
        [("user", "x")],
        [{"role": "user", "content": []}],
        [{"role": "user", "content": [{"type": "text", "text": 3}]}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}],
        [{"role": "user", "content": [{"type": "audio", "audio": "x"}]}],
    ],
)
def test_bad_messages_are_refused(messages):
    with pytest.raises(ValueError, match=r"^messages"):
        check_messages(messages)


PNG = PNG_SIGNATURE + b"rest of a tiny file"


def test_image_parts_are_sent_as_given():
    messages = [{"role": "user", "content": [{"type": "text", "text": "What is shown?"}, image_part(PNG)]}]
    with FakeServer([(200, "a cat")]) as server:
        chat, _ = client(server)
        assert chat.chat(messages) == "a cat"
    sent = server.requests[0][2]["messages"][0]["content"]
    assert sent == messages[0]["content"]
    url = sent[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",", 1)[1]) == PNG


@pytest.mark.parametrize("png", [b"GIF89a...", "not bytes", PNG.decode("latin-1")])
def test_image_part_needs_png_bytes(png):
    with pytest.raises(ValueError, match="^png="):
        image_part(png)


def test_a_function_answers_from_the_request():
    """The fake server's answers may depend on what was sent (a tool loop over HTTP)."""
    with FakeServer(lambda request: (200, request["messages"][-1]["content"].upper())) as server:
        chat, _ = client(server)
        assert [chat.chat([{"role": "user", "content": t}]) for t in ("a", "b")] == ["A", "B"]
    assert len(server.requests) == 2
