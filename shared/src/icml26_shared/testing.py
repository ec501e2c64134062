"""Helpers for the packages' tests: the one way to execute a README's usage block and check the output its
``# ->`` comments promise, and the one fake OpenAI-compatible chat server (loopback only) that chat
clients are tested against."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import os
import re
import sys
import threading
import tokenize
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .validation import fail

USAGE_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
ARROW = re.compile(r"#\s*->\s?(.*)")
SEPARATORS = (" ", "\t", ":", ",", ";")


def run_readme_usage(readme: str | os.PathLike, *, atol: float = 0.0, rtol: float = 0.0) -> dict[str, Any]:
    """Execute the first ```python block after the ``## Usage`` heading of ``readme``, statement by
    statement, and check what each statement prints against its ``# ->`` comments; return the namespace.

    The syntax, one for every README:

    * ``print(x)  # -> 0.0183`` : the comment on a statement's line (its last line, for one spanning
      several) or on comment lines right after it, one ``# ->`` per printed line; a loop that prints
      several lines may instead list them on one comment, separated by ``, ``.
    * The comment begins with what the line prints; prose may follow after a space, ``:``, ``,`` or
      ``;`` (``# -> 0.0183: exact TV``). A statement that prints without a ``# ->`` comment is not checked.
    * Numbers are compared with the precision they are written in: one unit in the last written digit
      (``0.0183`` +- 1e-4, ``5.9e-04`` +- 1e-5, ``9024.`` +- 1), so that a value whose rounding flips on
      another CPU still passes; integers without a point (counts, shapes) must match exactly. ``atol``
      and ``rtol`` widen every number's tolerance, for READMEs that print trained values.
    * All other text must match exactly, up to runs of whitespace.

    Any mismatch fails with an AssertionError naming the README line, what was printed and what the
    comment says; output is echoed to stdout."""
    path = Path(readme)
    text = path.read_text()
    if "## Usage" not in text:
        raise fail("readme", str(path), "a README with a '## Usage' section")
    head, usage = text.split("## Usage", 1)
    match = USAGE_BLOCK.search(usage)
    if match is None:
        raise fail("readme", str(path), "a ```python block in its '## Usage' section")
    first_line = (head + usage[: match.start(1)]).count("\n")  # README lines before the block's first
    source = match.group(1)
    tree = ast.parse(source, str(path))
    ast.increment_lineno(tree, first_line)
    arrows = _arrow_comments(source, first_line)
    namespace: dict[str, Any] = {"__name__": "readme"}
    problems = []
    for i, stmt in enumerate(tree.body):
        following = tree.body[i + 1].lineno if i + 1 < len(tree.body) else math.inf
        expected = [(n, c) for n, c in arrows if stmt.lineno <= n < following]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(ast.Module([stmt], type_ignores=[]), str(path), "exec"), namespace)
        sys.stdout.write(out.getvalue())
        problems += _check_printed(out.getvalue().splitlines(), expected, stmt.lineno, atol, rtol)
    if problems:
        raise AssertionError(
            f"{path}: the usage block printed something else than its comments say:\n" + "\n".join(problems)
        )
    return namespace


def _arrow_comments(source: str, offset: int) -> list[tuple[int, str]]:
    """(README line, expected text) of every ``# ->`` comment of the block."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and (m := ARROW.match(tok.string)):
            found.append((tok.start[0] + offset, m.group(1).rstrip()))
    return found


def _check_printed(
    printed: list[str], expected: list[tuple[int, str]], line: int, atol: float, rtol: float
) -> list[str]:
    """What is wrong with one statement's printed lines against its comments (empty when they agree)."""
    if not expected:
        return []
    if not printed:
        return [f"line {expected[0][0]}: nothing printed, the comment says '-> {expected[0][1]}'"]
    if len(expected) == 1 and len(printed) > 1:
        printed = [", ".join(printed)]
    if len(printed) != len(expected):
        return [f"line {line}: {len(printed)} lines printed {printed}, {len(expected)} '# ->' comments"]
    problems = []
    for got, (n, want) in zip(printed, expected, strict=True):
        why = _mismatch(got, want, atol, rtol)
        if why:
            problems.append(f"line {n}: printed {got!r}, the comment says '-> {want}' ({why})")
    return problems


def _tokens(text: str) -> list[tuple[str, str]]:
    """``text`` as alternating ("text", ...) and ("number", ...) pieces."""
    pieces, at = [], 0
    for m in NUMBER.finditer(text):
        if m.start() > at:
            pieces.append(("text", text[at : m.start()]))
        pieces.append(("number", m.group()))
        at = m.end()
    if at < len(text):
        pieces.append(("text", text[at:]))
    return pieces


def number_tolerance(written: str) -> float:
    """One unit in the last digit of a number as written; 0 for an integer written without a point."""
    mantissa, _, exponent = written.lower().partition("e")
    if "." not in mantissa and not exponent:
        return 0.0
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 10.0 ** (int(exponent or 0) - decimals)


def _mismatch(got: str, want: str, atol: float, rtol: float) -> str:
    """Why the printed line ``got`` is not what the comment ``want`` begins with; empty when it is."""
    g, w = _tokens(got.strip()), _tokens(want.strip())
    if not g:
        return "an empty line"
    for i, (kind, piece) in enumerate(g):
        if i >= len(w) or w[i][0] != kind:
            return f"{piece!r} where the comment has {w[i][1] if i < len(w) else 'nothing'!r}"
        other = w[i][1]
        if kind == "number":
            tol = max(number_tolerance(other), atol, rtol * abs(float(other)))
            if abs(float(piece) - float(other)) > tol * (1 + 1e-9):
                return f"{piece} differs from {other} by more than {tol:.3g}"
        elif i < len(g) - 1 and piece.split() != other.split():
            return f"{piece!r} where the comment has {other!r}"
        elif i == len(g) - 1:
            rest = _after_prefix(other, piece)
            if rest is None or (rest and not rest.startswith(SEPARATORS)):
                return f"{piece!r} where the comment has {other!r}"
    rest = w[len(g)][1] if len(w) > len(g) else ""
    if g and g[-1][0] == "number" and rest and not rest.startswith(SEPARATORS):
        return f"the comment goes on with {rest!r} right after the number"
    return ""


def _after_prefix(text: str, prefix: str) -> str | None:
    """What follows ``prefix`` at the start of ``text`` (runs of whitespace equal); None if it does not start so."""
    words, rest = prefix.split(), text.lstrip()
    for k, word in enumerate(words):
        if not rest.startswith(word):
            return None
        rest = rest[len(word) :]
        if k < len(words) - 1:
            if rest[:1].isspace():
                rest = rest.lstrip()
            else:
                return None
    return rest


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


def check_paper_dry_run(experiment: Any, *, data_may_be_missing: bool = False) -> Any:
    """Assert that ``experiment``'s paper config can start: it builds and its one step runs on the CPU (or is
    skipped with the reason). Data this machine lacks fails the check unless ``data_may_be_missing``, and is then
    named with its source and download size. Returns the ``DryRunReport`` for further checks."""
    report = experiment.dry_run("paper", "cpu")
    text = "\n".join(report.lines())
    assert (not report.error) if data_may_be_missing else report.ok, text
    assert report.step.startswith(("ran on cpu", "skipped: ")), report.step
    assert all(m.source and m.size_bytes > 0 for m in report.missing), text
    return report


def check_benchmarks(package_dir: str | os.PathLike) -> list[Any]:
    """Run every ``benchmarks/bench_*.py`` of a package at its tiny size (``run(tiny=True)``), so that a
    benchmark cannot rot: each must return a Benchmark of finite ratios > 0. Returns their records; the
    ratios of a tiny run mean nothing and are not checked against anything. torch's thread count is put
    back after each (a benchmark may pin it to one thread)."""
    import importlib.util

    from .bench import measure

    root = Path(package_dir)
    scripts = sorted((root / "benchmarks").glob("bench_*.py"))
    if not scripts:
        raise fail("package_dir", str(root), "a package with benchmarks/bench_*.py")
    records = []
    for script in scripts:
        spec = importlib.util.spec_from_file_location(f"_bench_{root.name}_{script.stem}", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        torch = sys.modules.get("torch")
        threads = torch.get_num_threads() if torch is not None else None
        try:
            _bench, record = measure(root.name, script.stem, module.run, tiny=True)
        finally:  # a benchmark that sets torch's threads must not leave them so for the tests after it
            torch = sys.modules.get("torch")
            if torch is not None and threads is not None:
                torch.set_num_threads(threads)
        bad = [c for c in record.cases if not (math.isfinite(c["ratio"]) and c["ratio"] > 0)]
        assert not bad, f"{script.name}: ratios not finite and > 0: {bad}"
        records.append(record)
    return records


def on_default_kernels(test_file: str | os.PathLike, expression: str, out_dir: str | os.PathLike) -> Any:
    """Evaluate ``expression`` (a tensor or state dict made by functions of the test module ``test_file``) in a
    fresh Python with ``ATEN_CPU_CAPABILITY=default``, torch's portable kernels, which round differently from
    the AVX2/AVX512 ones this machine uses; return it, to compare with the same expression in this process.
    A result that differs between the two was decided by floating-point noise, and would differ between CPUs."""
    import subprocess

    import torch

    test_file, path = Path(test_file), Path(out_dir) / "default_kernels.pt"
    script = (
        f"import sys, torch; sys.path.insert(0, {str(test_file.parent)!r}); from {test_file.stem} import *; "
        f"torch.save({expression}, sys.argv[1])"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    subprocess.run([sys.executable, "-c", script, str(path)], env=env, check=True)
    return torch.load(path)
