"""Helpers for the packages' tests: the one way to execute a README's usage block, and the one fake
OpenAI-compatible chat server (loopback only) that chat clients are tested against."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .validation import fail

USAGE_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def run_readme_usage(readme: str | os.PathLike) -> dict[str, Any]:
    """Execute the first ```python block after the ``## Usage`` heading of ``readme``; return its namespace."""
    path = Path(readme)
    text = path.read_text()
    if "## Usage" not in text:
        raise fail("readme", str(path), "a README with a '## Usage' section")
    match = USAGE_BLOCK.search(text.split("## Usage", 1)[1])
    if match is None:
        raise fail("readme", str(path), "a ```python block in its '## Usage' section")
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(match.group(1), str(path), "exec"), namespace)
    return namespace


def completion(text: str) -> bytes:
    """The JSON body of a chat completion whose reply is ``text``."""
    message = {"role": "assistant", "content": text}
    return json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()


Answer = tuple[int, bytes | str]
Answerer = Callable[[dict[str, Any]], Answer]


class FakeChatServer:
    """A fake ``POST {base_url}/chat/completions`` server on 127.0.0.1 (a free port), as a context manager.

    ``answers`` is a list of ``(status, body)`` served in order, or a function of the request's JSON
    returning one (for replies that depend on what was sent, e.g. a tool loop); a ``str`` body is the reply
    text, wrapped by ``completion``; ``bytes`` are sent as they are (malformed answers). ``hang=True``
    never answers (client timeouts). Every request is recorded in ``requests`` as (path, headers, JSON).
    """

    def __init__(self, answers: Sequence[Answer] | Answerer = (), *, hang: bool = False) -> None:
        self.answers = answers if callable(answers) else list(answers)
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.release = threading.Event()  # a hanging handler waits on it until the server closes
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, dict(self.headers), request))
                if hang:
                    server.release.wait(10)
                    return
                status, body = server.answers(request) if callable(server.answers) else server.answers.pop(0)
                body = completion(body) if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
