"""LMM judges: reply parsing, the three modes' messages, the image client on a loopback fake server,
and ``evaluate`` writing as it goes, resuming, and recording failed attempts."""

import base64
import io
import json
import socket

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_dlebench.data import SMALL_AREA, make_item
from icml26_dlebench.imaging import zoom
from icml26_dlebench.lmm import LMMJudge, evaluate, parse_reply, system_prompt
from icml26_dlebench.method import MetricJudge, Scores
from icml26_shared import ChatCompletionsClient, ChatError
from icml26_shared.testing import FakeChatServer
from PIL import Image


@pytest.fixture(scope="module")
def item():
    return make_item("material", 64, SMALL_AREA, np.random.default_rng(2))


def decode(part):
    """The RGB array of a PNG ``image_url`` content part."""
    png = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(png)))


def split(message):
    """(text, images) of a message whose content is a string or content parts."""
    if isinstance(message["content"], str):
        return message["content"], []
    text, *images = message["content"]
    return text["text"], [decode(part) for part in images]


class Scripted:
    """A ChatModel answering from a script; records (texts, images) per message of each call."""

    def __init__(self, *replies):
        self.replies, self.calls = list(replies), []

    def chat(self, messages):
        self.calls.append([split(m) for m in messages])
        return self.replies.pop(0)


def reply(i, v):
    return json.dumps({"instruction_following": i, "visual_consistency": v})


@given(st.integers(1, 5), st.integers(1, 5), st.text(alphabet="abc .\n", max_size=20))
def test_parse_reply_reads_scores_inside_prose(i, v, prose):
    assert parse_reply(f"{prose}{reply(i, v)}{prose}") == Scores(i, v)


@pytest.mark.parametrize(
    "text",
    ["no json here", "{not json}", reply(0, 3), reply(4, 6), '{"instruction_following": "4"}', '{"tool": "zoom"}'],
)
def test_parse_reply_rejects_malformed_answers(text):
    with pytest.raises(ValueError, match="reply="):
        parse_reply(text)


def test_whole_and_oracle_modes_send_the_rubric_and_their_images(item):
    for mode, n_images in (("whole", 2), ("oracle", 6)):
        chat = Scripted(reply(4, 5))
        assert LMMJudge(chat, view_size=32).score(item, item.reference, mode) == Scores(4, 5)
        (system, no_images), (text, images) = chat.calls[0]
        assert system == system_prompt() and no_images == []
        assert item.instruction.text in text and "visual_consistency" in system
        assert len(images) == n_images


def test_tool_mode_answers_zoom_calls_with_enlarged_crops(item):
    chat = Scripted('{"tool": "zoom", "box": [0, 0, 16, 16]}', reply(3, 4))
    assert LMMJudge(chat, view_size=40).score(item, item.reference, "tool") == Scores(3, 4)
    turns = chat.calls[1]
    assert len(turns) == 4 and turns[2] == ('{"tool": "zoom", "box": [0, 0, 16, 16]}', [])
    images = turns[3][1]
    assert [im.shape for im in images] == [(40, 40, 3), (40, 40, 3)]
    for got, image in zip(images, (item.source, item.reference), strict=True):  # PNG keeps the 8-bit pixels
        np.testing.assert_array_equal(got, np.round(zoom(image, (0, 0, 16, 16), 40) * 255).astype(np.uint8))


@pytest.mark.parametrize(
    ("replies", "mode", "name"),
    [
        (['{"tool": "zoom", "box": [0, 0, 16, 16]}'], "whole", "reply="),
        (['{"tool": "zoom", "box": [10, 0, 5, 16]}'], "tool", "box="),
        (['{"tool": "zoom", "box": [0, 0, 16, 99]}'], "tool", "box="),
        (['{"tool": "zoom", "box": [0, 0, 16, 16]}'] * 2, "tool", "reply="),
    ],
)
def test_judge_refuses_bad_tool_use(item, replies, mode, name):
    with pytest.raises(ValueError, match=name):
        LMMJudge(Scripted(*replies), max_tool_calls=1).score(item, item.reference, mode)


def test_judge_needs_an_image_chat_model_and_valid_settings():
    with pytest.raises(ValueError, match="chat="):
        LMMJudge(object())
    with pytest.raises(ValueError, match="view_size="):
        LMMJudge(Scripted(), view_size=2)
    with pytest.raises(ValueError, match="max_tool_calls="):
        LMMJudge(Scripted(), max_tool_calls=-1)


def client(url, **kw):
    return ChatCompletionsClient(url, model="fake-lmm", max_retries=0, sleep=lambda s: None, **kw)


def test_image_client_sends_png_image_parts(item):
    with FakeChatServer([(200, reply(5, 4))]) as server:
        assert LMMJudge(client(server.base_url)).score(item, item.reference, "whole") == Scores(5, 4)
    system, user = server.requests[0][2]["messages"]
    assert isinstance(system["content"], str)
    text, source, edited = user["content"]
    assert text["type"] == "text" and source["type"] == edited["type"] == "image_url"
    np.testing.assert_array_equal(decode(edited), np.round(item.reference * 255).astype(np.uint8))


def test_tool_mode_over_http_resends_the_conversation_with_its_images(item):
    script = [
        (200, 'I will look closer. {"tool": "zoom", "box": [8, 8, 40, 40]}'),
        (200, reply(2, 3)),
    ]
    with FakeChatServer(script) as server:
        assert LMMJudge(client(server.base_url), view_size=24).score(item, item.source, "tool") == Scores(2, 3)
    first, second = (request["messages"] for _, _, request in server.requests)
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[:2] == first  # the endpoint is stateless: the first turn and its two images again
    assert [p["type"] for p in second[3]["content"]] == ["text", "image_url", "image_url"]
    assert decode(second[3]["content"][1]).shape == (24, 24, 3)


@pytest.mark.parametrize(
    ("script", "hang", "match"),
    [([(200, b"<html>not json</html>")], False, "without a chat completion"), ([(500, b"{}")], False, "HTTP 500"),
     ([], True, "timeout")],
)  # fmt: skip
def test_endpoint_failures_are_chat_errors(item, script, hang, match):
    with FakeChatServer(script, hang=hang) as server:
        with pytest.raises(ChatError, match=match):
            LMMJudge(client(server.base_url, timeout_s=0.3)).score(item, item.reference, "whole")


def test_evaluate_writes_as_it_goes_records_failures_and_resumes(item, tmp_path):
    path = tmp_path / "scores.jsonl"
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = LMMJudge(client(f"http://127.0.0.1:{port}/v1", timeout_s=0.5))
    edits = [("a", item, item.reference), ("b", item, item.source)]
    assert evaluate(unreachable, edits, "whole", path) == {}
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"] and all("ChatError" in r["error"] for r in rows)
    scripted = LMMJudge(Scripted(reply(5, 5), "garbage"))
    done = evaluate(scripted, edits, "whole", path)
    assert done == {"a": Scores(5, 5)}
    assert "reply=" in json.loads(path.read_text().splitlines()[-1])["error"]
    with open(path, "a") as fh:
        fh.write('{"id": "c", "instruc')  # a line cut by a crash
    done = evaluate(MetricJudge(view_size=16), [*edits, ("c", item, item.source)], "tool", path)
    assert set(done) == {"a", "b", "c"} and done["a"] == Scores(5, 5)  # "a" was not scored again
    with pytest.raises(ValueError, match="judge="):
        evaluate(object(), edits, "tool", path)
    with pytest.raises(ValueError, match="mode="):
        evaluate(scripted, edits, "glance", path)
