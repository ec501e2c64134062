import json

import docs
import pytest
from docs import DocsError, claim_table, copy_mathjax, generate
from release import ReleaseError

CLAIM = {
    "id": "c1",
    "statement": "a | b",
    "measured": {"mean": 0.5, "sem": 0.01, "n": 3},
    "rule": "mean(|r|) < 1",
    "verdict": "holds",
}


@pytest.fixture
def repo(tmp_path):
    """README -> packages/demo, CONTRIBUTING.md; packages/demo/README links a figure, the guide and a source file."""
    (tmp_path / "README.md").write_text("# icml26\n\n[`demo`](packages/demo) [guide](CONTRIBUTING.md)\n")
    (tmp_path / "CONTRIBUTING.md").write_text("# Contributing\n\n[report](results/REPORT.md)\n")
    pkg = tmp_path / "packages" / "demo"
    (pkg / "src").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text('[project]\nname = "icml26-demo"\nversion = "0.1.0"\n')
    (pkg / "src" / "m.py").write_text("")
    (pkg / "README.md").write_text(
        "# demo\n\n![fig](../../results/demo/fig.png)\n"
        "[guide](../../CONTRIBUTING.md#adding-a-paper)\n[code](src/m.py)\n"
    )
    res = tmp_path / "results" / "demo"
    res.mkdir(parents=True)
    (res / "fig.png").write_bytes(b"png")
    (res / "extra.png").write_bytes(b"png")
    (res / "results.json").write_text(json.dumps({"config_name": "quick", "version": "0.1.0", "claims": [CLAIM]}))
    (tmp_path / "results" / "REPORT.md").write_text("# report\n\n[f](demo/fig.png)\n")
    return tmp_path


def test_pages_and_links(repo, tmp_path):
    out = tmp_path / "site-src"
    pages = generate(out, repo, "https://github.com/o/r", "main")
    assert pages == ["api.md", "contributing.md", "index.md", "papers/demo.md", "results/REPORT.md"]
    assert "[`demo`](papers/demo.md) [guide](contributing.md)" in (out / "index.md").read_text()
    assert "[report](results/REPORT.md)" in (out / "contributing.md").read_text()
    paper = (out / "papers" / "demo.md").read_text()
    assert "![fig](../results/demo/fig.png)" in paper
    assert "[guide](../contributing.md#adding-a-paper)" in paper
    assert "[code](https://github.com/o/r/blob/main/packages/demo/src/m.py)" in paper
    assert "![extra.png](../results/demo/extra.png)" in paper and paper.count("fig.png") == 1
    assert "1/1 claims hold in the committed `quick` run" in paper
    # `|` escaped for GitHub; inside code Python-Markdown keeps the span whole, so the page has it bare there
    assert "| `c1` | a \\| b | 0.5 ± 0.01 (n = 3) | `mean(|r|) < 1` | **holds** |" in paper
    assert (out / "results" / "demo" / "fig.png").read_bytes() == b"png"
    assert "::: icml26_shared" in (out / "api.md").read_text()


def test_a_medium_run_gets_its_own_table_on_the_paper_page(repo, tmp_path):
    quick = json.loads((repo / "results" / "demo" / "results.json").read_text())
    medium = {**quick, "config_name": "medium", "claims": [{**quick["claims"][0], "verdict": "fails"}]}
    (repo / "results" / "demo" / "medium").mkdir()
    (repo / "results" / "demo" / "medium" / "results.json").write_text(json.dumps(medium))
    generate(tmp_path / "out", repo)
    paper = (tmp_path / "out" / "papers" / "demo.md").read_text()
    assert "### Medium (the scale ladder)" in paper and "0/1 claims hold in the committed `medium` run" in paper
    assert "[report](../results/REPORT.md#demo)" in paper
    (repo / "results" / "demo" / "medium" / "curve.png").write_bytes(b"png")
    generate(tmp_path / "out", repo)
    assert (tmp_path / "out" / "results" / "demo" / "medium" / "curve.png").read_bytes() == b"png"  # REPORT links it


def test_missing_and_corrupt_results_are_said(repo):
    assert "No committed results: run `make nope`" in claim_table("nope", repo)
    (repo / "results" / "demo" / "results.json").write_text("{not json")
    assert "`results/demo/results.json` is unreadable (JSONDecodeError" in claim_table("demo", repo)
    (repo / "results" / "demo" / "results.json").write_text(json.dumps({"claims": [{"id": "x"}]}))
    assert "is unreadable (KeyError" in claim_table("demo", repo)


def test_broken_link_fails(repo, tmp_path):
    (repo / "packages" / "demo" / "README.md").write_text("![f](../../results/demo/gone.png)\n")
    with pytest.raises(ReleaseError, match="results/demo/gone.png does not exist"):
        generate(tmp_path / "out", repo)


def test_a_table_row_with_a_stray_pipe_fails_naming_its_file_and_line(repo, tmp_path):
    readme = repo / "packages" / "demo" / "README.md"
    readme.write_text("# demo\n\n| claim | verdict |\n|---|---|\n| max |x| < 1 | **holds** |\n")
    expected = r"packages/demo/README.md: line 5: a table row has 4 cells where its header has 2"
    with pytest.raises(DocsError, match=expected):
        generate(tmp_path / "out", repo)
    readme.write_text("# demo\n\n| claim | verdict |\n|---|---|\n| `max \\|x\\|` < 1 | **holds** |\n\n`a \\| b`\n")
    generate(tmp_path / "out", repo)
    page = (tmp_path / "out" / "papers" / "demo.md").read_text()
    assert "| `max |x|` < 1 | **holds** |" in page and "\n`a \\| b`\n" in page  # outside a table: as written


def test_fenced_code_is_not_a_table():
    assert docs.misshapen_rows("```\n| a |\n|---|\n| b | c |\n```\n") == []
    assert docs.misshapen_rows("| a |\n|---|\n| b | c |\n") == [(3, 2, 1)]


def test_index_says_how_to_view_the_site(repo, tmp_path):
    generate(tmp_path / "out", repo)
    index = (tmp_path / "out" / "index.md").read_text()
    assert "Open `build/site/index.html`" in index and "python3 -m http.server -d build/site" in index
    assert "processHtmlClass" in (tmp_path / "out" / "javascripts" / "mathjax-config.js").read_text()
    assert "pre-wrap" in (tmp_path / "out" / "stylesheets" / "extra.css").read_text()


def test_missing_mathjax_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(docs.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DocsError, match=r"MathJax not found: .*uv sync --locked --only-group docs"):
        copy_mathjax(tmp_path)
