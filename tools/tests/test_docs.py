import json

import pytest
from docs import claim_table, generate
from release import ReleaseError

CLAIM = {
    "id": "c1",
    "statement": "a | b",
    "measured": {"mean": 0.5, "sem": 0.01, "n": 3},
    "rule": "r",
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
    assert "| `c1` | a \\| b | 0.5 ± 0.01 (n = 3) | `r` | **holds** |" in paper
    assert (out / "results" / "demo" / "fig.png").read_bytes() == b"png"
    assert "::: icml26_shared" in (out / "api.md").read_text()


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
