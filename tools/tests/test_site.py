"""The built documentation site (build/site, from `make docs`) as a reader sees it.

Static checks over every page: each local link and image resolves to a file (page links end in .html, so
the site works opened from disk) and each table row has as many cells as its header. Then Debian's
headless Chromium, driven over its DevTools pipe (no driver or browser download), loads the pages a
reader opens first from a local server and checks what it shows: the maths typeset (sinkhorn-te's
equations), every claims table whole with a verdict in its verdict column, every figure loaded, code
that fits its box at 1280 px, and no console error. `make ci` builds the site (its docs stage) before
the tests; without a current build, or without Chromium, these tests skip and say why.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from docs import ROOT, default_repo_url, generate

SITE = ROOT / "build" / "site"
# The landing page, the maths page, a claims table with a `|` in it, one with tables wider than the text, the report.
BROWSER_PAGES = [
    "index.html",
    "papers/sinkhorn-te.html",
    "papers/atlas.html",
    "papers/fremia.html",
    "results/REPORT.html",
]
VERDICTS = {"holds", "fails", "inconclusive"}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
    "--remote-debugging-pipe",
]


@functools.cache
def site_state() -> str:
    """'' when build/site was built from the repository as it is now, else why it cannot be tested."""
    if not (SITE / "index.html").is_file():
        return f"{SITE} is not built: run `make docs` (make ci does, before the tests)"
    with tempfile.TemporaryDirectory() as tmp:
        pages = generate(Path(tmp), ROOT, default_repo_url())
        built = ROOT / "build" / "docs"
        stale = [
            p for p in pages if not (built / p).is_file() or (built / p).read_text() != (Path(tmp) / p).read_text()
        ]
    return f"{SITE} is older than the repository ({stale[0]} differs): run `make docs`" if stale else ""


@pytest.fixture(scope="module")
def site() -> Path:
    if site_state():
        pytest.skip(site_state())
    return SITE


class Page(HTMLParser):
    """The local links, images and tables (cells per row, header first) of one built page."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.tables: list[list[int]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        target = a.get("href") if tag == "a" else a.get("src") if tag in ("img", "script") else None
        if tag == "link" and a.get("rel") == "stylesheet":
            target = a.get("href")
        if target and not re.match(r"^([a-z][a-z0-9+.-]*:|//)", target):
            self.links.append(target)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append(0)
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self.tables[-1][-1] += 1


@functools.cache
def parsed(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text())
    return page


def html_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def test_every_local_link_and_image_resolves_to_a_file(site):
    broken = []
    for path in html_pages(site):
        for link in parsed(path).links:
            parts = urlsplit(link)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not target.is_file():
                broken.append(f"{path.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html" and parts.fragment not in parsed(target).ids:
                broken.append(f"{path.relative_to(site)}: {link} (no such anchor)")
    assert not broken, f"{len(broken)} broken local links, e.g. {broken[:5]}"


def test_every_table_row_has_as_many_cells_as_its_header(site):
    bad = [
        f"{path.relative_to(site)}: table {t} has rows of {sorted(set(rows))} cells"
        for path in html_pages(site)
        for t, rows in enumerate(parsed(path).tables)
        if len(set(rows)) > 1
    ]
    assert not bad, bad


class Chromium:
    """Headless Chromium over its DevTools pipe (fds 3 and 4, NUL-separated JSON): one tab, its events kept."""

    def __init__(self, binary: str, profile: str):
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()

        def fds():  # the pipe's ends become the child's fds 3 (it reads) and 4 (it writes)
            a, b = os.dup(to_child), os.dup(from_child)
            for fd, number in ((a, 3), (b, 4)):
                os.dup2(fd, number)
                os.set_inheritable(number, True)

        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds,
            pass_fds=(3, 4),  # kept open through exec (the child has them after fds())
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer, self._next_id, self.events = b"", 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=self.session)

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if not select.select([self._read], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed its pipe (exit {self.proc.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: str | None = None, timeout: float = 30, **params) -> dict:
        self._next_id += 1
        command = {"id": self._next_id, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        os.write(self._write, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._message(deadline))

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", session=self.session, url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.call(
            "Runtime.evaluate", session=self.session, expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        found = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif e.get("method") == "Runtime.exceptionThrown":
                details = p["exceptionDetails"]
                thrown = details.get("exception", {}).get("description", "")
                found.append(f"{details.get('text', '')} {thrown} {details.get('url', '')}")
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                found.append(f"{p['entry']['text']} {p['entry'].get('url', '')}")
        return found

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self._read)
        os.close(self._write)


# What a reader sees, once MathJax has typeset and every image has settled.
READER_VIEW = """(async () => {
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
  await Promise.all([...document.images].map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  const text = e => e.textContent.trim();
  const tables = [...document.querySelectorAll("article table")].map(t => {
    const head = [...t.querySelectorAll("thead th")].map(text);
    const rows = [...t.querySelectorAll("tbody tr")].map(r => [...r.children].map(text));
    return {head, rows};
  });
  return {
    maths: document.querySelectorAll(".arithmatex").length,
    typeset: document.querySelectorAll(".arithmatex mjx-container svg").length,
    mathErrors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length,
    tables,
    badImages: [...document.images].filter(i => !i.naturalWidth).map(i => i.getAttribute("src")),
    cutCode: [...document.querySelectorAll("article pre > code")]
      .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 60)),
    wideTables: [...document.querySelectorAll("article table")].map(t => {
      const box = t.closest(".md-typeset__scrollwrap") || t.parentElement;
      const fits = t.getBoundingClientRect().right <= box.getBoundingClientRect().right + 1;
      return {head: text(t.querySelector("th") || t), fits, scrollbar: box.offsetHeight > box.clientHeight};
    }).filter(t => !t.fits),
    equations: [...document.querySelectorAll("h2#method-in-equations ~ ol")].slice(0, 1).map(text).join(""),
    equationMaths: document.querySelectorAll("h2#method-in-equations ~ ol .arithmatex mjx-container svg").length,
  };
})()"""


@pytest.fixture(scope="module")
def browser(site):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as profile:
        chromium = Chromium(binary, profile)
        views = {}
        try:
            for page in BROWSER_PAGES:
                chromium.open(f"http://127.0.0.1:{server.server_port}/{page}")
                views[page] = chromium.evaluate(READER_VIEW) | {"errors": chromium.console_errors()}
            chromium.open((site / "papers" / "sinkhorn-te.html").as_uri())  # opened from disk, no server
            views["file"] = chromium.evaluate(READER_VIEW) | {"errors": chromium.console_errors()}
        finally:
            chromium.close()
            server.shutdown()
            server.server_close()
    return views


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_sinkhorn_te_maths_is_typeset(browser):
    view = browser["papers/sinkhorn-te.html"]
    assert view["typeset"] == view["maths"] and view["mathErrors"] == 0, view
    assert view["equationMaths"] >= 40, view["equationMaths"]  # the nine equations, each of several formulas
    # MathJax's assistive MathML gives the formula's text: nothing lost as a tag, no TeX source left showing
    assert "minπ⟨c,π⟩+εKL(π∥α⊗β)" in view["equations"], view["equations"][:200]
    assert not re.search(r"min_pi|_eps|\$|\\\(", view["equations"]), view["equations"]


def test_a_page_opened_from_disk_works_but_for_search(browser):
    view = browser["file"]
    assert view["typeset"] == view["maths"] >= 40 and view["badImages"] == []
    assert all("search/search_index" in e for e in view["errors"]), view["errors"]  # search needs a server


@pytest.mark.parametrize("page", BROWSER_PAGES)
def test_a_reader_sees_whole_tables_loaded_figures_and_no_error(browser, page):
    view = browser[page]
    assert view["errors"] == [], view["errors"]
    assert view["badImages"] == [], view["badImages"]
    assert view["cutCode"] == [], view["cutCode"]
    # a table wider than the text scrolls with a visible bar; the report's tables wrap their cells and fit
    hidden = [t["head"] for t in view["wideTables"] if not t["scrollbar"] or page == "results/REPORT.html"]
    assert hidden == [], hidden
    for table in view["tables"]:
        assert all(len(row) == len(table["head"]) for row in table["rows"]), table["head"]
        if table["head"] and table["head"][-1] == "verdict":  # a verdict, perhaps annotated: "fails (sensitive)"
            assert {row[-1].split(" ")[0] for row in table["rows"]} <= VERDICTS, table["rows"]
