"""One way to talk to a language model: a ``ChatModel`` maps chat messages to the reply text.

Two backends implement it, so a package takes any of them (or its own scripted policy):

* ``ChatCompletionsClient``: any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint (a hosted API,
  vLLM, llama.cpp's server, ...). The base URL, model name and key come from the arguments or else from the
  environment variables ``ICML26_CHAT_BASE_URL``, ``ICML26_CHAT_MODEL`` and ``ICML26_CHAT_API_KEY`` (the key is
  optional: local servers need none). There is no default address: nothing is sent anywhere the user did not
  name. Timeouts, retries with exponential backoff on 429, 5xx and connection errors, and a ``ChatError``
  naming the status and URL on any other failure (non-2xx answer, malformed JSON).
* ``LocalChatModel``: SmolLM2-135M-Instruct (``load_smollm2``) or any transformers causal LM with a chat
  template, decoded greedily or sampled with an explicit ``torch.Generator`` (reproducible per seed).

A message's ``content`` is a string, or a list of OpenAI content parts (text parts and ``image_part(png)``)
for models that read images: ``ChatCompletionsClient`` sends the parts as they are, ``LocalChatModel``
(text only) refuses them. Tests talk to ``icml26_shared.testing.FakeChatServer`` on the loopback.

Only the standard library is imported here; torch is imported by ``LocalChatModel`` when it is built.
"""

from __future__ import annotations

import base64
import inspect
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .log import get_logger
from .validation import check_int, check_number, check_positive, fail

log = get_logger("icml26.chat")

BASE_URL_ENV = "ICML26_CHAT_BASE_URL"
MODEL_ENV = "ICML26_CHAT_MODEL"
API_KEY_ENV = "ICML26_CHAT_API_KEY"
ROLES = ("system", "user", "assistant")
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IMAGE_URL_SCHEMES = ("data:image/", "http://", "https://")

Messages = Sequence[Mapping[str, Any]]


class ChatError(RuntimeError):
    """A chat backend could not produce a reply (the message names the status and URL where there is one)."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers chat messages ``[{"role": ..., "content": ...}, ...]`` with the reply text."""

    def chat(self, messages: Messages) -> str: ...


def image_part(png: bytes) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part holding ``png`` (the bytes of a PNG file) as a base64 data URL."""
    if not isinstance(png, bytes) or not png.startswith(PNG_SIGNATURE):
        raise fail("png", type(png).__name__, "the bytes of a PNG file (starting with the PNG signature)")
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}}


def _check_part(where: str, part: Any) -> dict[str, Any]:
    """One content part: ``{"type": "text", "text": str}`` or ``{"type": "image_url", "image_url": {"url": str}}``."""
    if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    image = part.get("image_url") if isinstance(part, Mapping) and part.get("type") == "image_url" else None
    if isinstance(image, Mapping) and isinstance(image.get("url"), str) and image["url"].startswith(IMAGE_URL_SCHEMES):
        return {"type": "image_url", "image_url": {"url": image["url"]}}
    raise fail(where, part, 'a {"type": "text", "text": str} or {"type": "image_url", "image_url": {"url": ...}} part')


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """A non-empty list of ``{"role": one of ROLES, "content": ...}``, copied as plain dicts.

    ``content`` is a string, or (for models that read images) a non-empty list of OpenAI content parts:
    text parts and ``image_url`` parts (``image_part`` builds one from PNG bytes).
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence) or not messages:
        raise fail("messages", messages, 'a non-empty list of {"role": ..., "content": ...} dicts')
    out = []
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, Mapping) else None
        parts = isinstance(content, Sequence) and not isinstance(content, str | bytes) and len(content) > 0
        if not isinstance(m, Mapping) or m.get("role") not in ROLES or not (isinstance(content, str) or parts):
            raise fail(f"messages[{i}]", m, f'a dict with "role" in {list(ROLES)} and a str (or parts) "content"')
        if parts:
            content = [_check_part(f"messages[{i}].content[{j}]", part) for j, part in enumerate(content)]
        out.append({"role": m["role"], "content": content})
    return out


def _setting(name: str, value: str | None, env: str, required: bool) -> str | None:
    value = value if value is not None else os.environ.get(env)
    if required and not value:
        raise fail(name, value, f"a value passed as {name}= or set in ${env} (there is no default)")
    return value or None


def _check_base_url(base_url: str) -> str:
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise fail("base_url", base_url, "an http(s) URL such as http://127.0.0.1:8000/v1")
    return base_url.rstrip("/")


class ChatCompletionsClient:
    """An OpenAI-compatible chat-completions client (standard library only).

    ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``; else ``$ICML26_CHAT_BASE_URL``), ``model`` (else
    ``$ICML26_CHAT_MODEL``), ``api_key`` (else ``$ICML26_CHAT_API_KEY``; sent as a bearer token when set).
    ``timeout_s`` bounds each attempt; ``max_retries`` further attempts follow a 429, a 5xx, a timeout or a
    connection error, after ``backoff_s * 2**attempt`` seconds. ``temperature``, ``max_tokens`` and ``seed``
    go into the request body when given.
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = _check_base_url(_setting("base_url", base_url, BASE_URL_ENV, True)) + "/chat/completions"
        self.model = _setting("model", model, MODEL_ENV, True)
        self.api_key = _setting("api_key", api_key, API_KEY_ENV, False)
        self.timeout_s = check_positive("timeout_s", timeout_s)
        self.max_retries = check_int("max_retries", max_retries, 0, 20)
        self.backoff_s = check_number("backoff_s", backoff_s)
        if self.backoff_s < 0:
            raise fail("backoff_s", backoff_s, "a number >= 0")
        self.options = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        self.options = {k: v for k, v in self.options.items() if v is not None}
        self.sleep = sleep

    def __repr__(self) -> str:  # never shows the key
        return f"ChatCompletionsClient(url={self.url!r}, model={self.model!r})"

    def _request(self, body: bytes) -> urllib.request.Request:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return urllib.request.Request(self.url, data=body, headers=headers, method="POST")

    def _post(self, payload: dict[str, Any]) -> tuple[int, bytes]:
        """POST with retries; the (status, body) of the first 2xx answer, else ``ChatError``."""
        body = json.dumps(payload).encode("utf-8")
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                with urllib.request.urlopen(self._request(body), timeout=self.timeout_s) as response:
                    return response.status, response.read()
            except urllib.error.HTTPError as err:
                detail = err.read()[:300].decode("utf-8", "replace")
                if err.code not in RETRY_STATUS or last:
                    raise ChatError(f"POST {self.url} answered HTTP {err.code} {err.reason}: {detail}") from err
                why = f"HTTP {err.code}"
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                reason = getattr(err, "reason", err)
                if last:
                    raise ChatError(
                        f"POST {self.url} failed after {attempt + 1} attempts "
                        f"(timeout {self.timeout_s} s each): {reason}"
                    ) from err
                why = str(reason)
            delay = self.backoff_s * 2**attempt
            log.warning("POST %s: %s; retry %d/%d in %.1f s", self.url, why, attempt + 1, self.max_retries, delay)
            self.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def chat(self, messages: Messages) -> str:
        """The reply text of ``choices[0].message.content`` for ``messages``."""
        status, raw = self._post({"model": self.model, "messages": check_messages(messages), **self.options})
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as err:
            shown = raw[:200].decode("utf-8", "replace")
            raise ChatError(
                f"POST {self.url} answered HTTP {status} without a chat completion "
                f"(expected JSON with choices[0].message.content): {shown!r}"
            ) from err
        if not isinstance(content, str):
            raise ChatError(f"POST {self.url} answered HTTP {status} with non-text content {content!r:.200}")
        return content


class LocalChatModel:
    """A local transformers causal LM behind the ``ChatModel`` protocol (default: SmolLM2-135M-Instruct).

    The messages go through the tokenizer's chat template; up to ``max_new_tokens`` tokens are decoded with a
    key/value cache, greedily when ``temperature == 0``, else sampled from ``softmax(logits / temperature)``
    with a ``torch.Generator`` seeded by ``seed`` (the same seed gives the same sequence of replies).
    """

    def __init__(
        self,
        model: Any = None,
        tokenizer: Any = None,
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        import torch

        if (model is None) != (tokenizer is None):
            raise fail("model", type(model).__name__, "model and tokenizer both given, or neither (SmolLM2)")
        if model is None:
            from .llm import load_smollm2

            model, tokenizer = load_smollm2()
        self.model, self.tokenizer = model.eval(), tokenizer
        self.max_new_tokens = check_int("max_new_tokens", max_new_tokens, 1)
        self.temperature = check_number("temperature", temperature)
        if self.temperature < 0:
            raise fail("temperature", temperature, "a number >= 0 (0 = greedy)")
        self.generator = torch.Generator().manual_seed(check_int("seed", seed, 0))
        # the key/value cache argument and output field: `cache` from transformers 5.2x on, `past_key_values` before
        forward = inspect.signature(type(model).forward).parameters
        self.cache_name = "cache" if "cache" in forward else "past_key_values"
        self.last_only = {"logits_to_keep": 1} if "logits_to_keep" in forward else {}  # no head on the prompt

    def chat(self, messages: Messages) -> str:
        return self.replies(messages, 1)[0]

    def replies(self, messages: Messages, n: int) -> list[str]:
        """``n`` replies to the same messages, decoded together: the prompt is encoded once and its key/value
        cache repeated n times (greedy replies are then n equal copies)."""
        import torch

        check_int("n", n, 1)
        messages = check_messages(messages)
        for i, m in enumerate(messages):
            if not isinstance(m["content"], str):
                raise fail(f"messages[{i}]", m, "text content: a local text model reads no images")
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        ids = ids["input_ids"] if isinstance(ids, Mapping) else ids  # a BatchEncoding in transformers 5
        tokens = torch.tensor([ids], dtype=torch.long)
        stop = self.tokenizer.eos_token_id
        done = torch.zeros(n, dtype=torch.bool)
        out: list[list[int]] = [[] for _ in range(n)]
        cache = None
        with torch.no_grad():
            for step in range(self.max_new_tokens):
                result = self.model(input_ids=tokens, use_cache=True, **{self.cache_name: cache, **self.last_only})
                cache, logits = getattr(result, self.cache_name), result.logits[:, -1].double()
                if step == 0 and n > 1:
                    cache.batch_repeat_interleave(n)
                    logits = logits.expand(n, -1)
                if self.temperature == 0:
                    token = logits.argmax(-1)
                else:
                    probs = torch.softmax(logits / self.temperature, dim=-1)
                    token = torch.multinomial(probs, 1, generator=self.generator)[:, 0]
                done |= token == stop
                for i in range(n):
                    if not done[i]:
                        out[i].append(int(token[i]))
                if bool(done.all()):
                    break
                tokens = token.reshape(n, 1)
        return [self.tokenizer.decode(reply, skip_special_tokens=True) for reply in out]
