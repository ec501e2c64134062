"""What the root README says about installing, timing, layout and data agrees with the repository (issue 26)."""

import json
import re
import statistics
import tomllib
from pathlib import Path

from check_package import install_section
from release import site

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PACKAGES = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))


def section(title: str) -> str:
    match = re.search(rf"(?ms)^## {re.escape(title)}\n(?P<body>.*?)(?=^## |\Z)", README)
    assert match, f"README has no '## {title}' section"
    return match["body"]


def source(pkg: Path) -> Path:
    return pkg / "src" / ("icml26_" + pkg.name.replace("-", "_"))


def test_one_paper_leads_with_the_git_url_of_the_one_address():
    repository = site(ROOT)["repository"]
    text = section("One paper")
    assert text.index(f"git+{repository}#subdirectory=packages/sinkhorn-te") < text.index("After a release")
    assert f"git+{repository}#subdirectory=shared" in text
    assert "It looks like a path" in text  # the local-clone form pip < 24.1 rejects is named as such


def test_list_after_make_slug_reads_the_committed_results():
    block = section("One paper").split("```bash")[-1]
    lists = [line for line in block.splitlines() if " list" in line and "bin/icml26 " in line]
    assert lists and all("--out results" in line for line in lists)


def test_scaling_out_names_the_environment_that_sees_every_paper():
    text = section("Scaling out")
    assert "`.venv/bin/icml26" in text and "make setup" in text


def test_quick_wall_times_stated_are_the_committed_records():
    walls = {
        p.parent.name: json.loads(p.read_text())["wall_seconds"] for p in (ROOT / "results").glob("*/results.json")
    }
    slowest = max(walls, key=walls.get)
    over = sum(w > 120 for w in walls.values())
    stated = (
        f"median of {statistics.median(walls.values()):.0f} s, a maximum of {walls[slowest]:.0f} s ({slowest}",
        f"{over or 'none'} of the {len(walls)} {'is' if over == 1 else 'are'} over 120 s",
    )
    text = " ".join(README.split())
    missing = [s for s in stated if s not in text]
    assert not missing, f"README's quick timing sentence should say {stated} (from results/*/results.json)"


def test_layout_names_what_each_package_lacks():
    text = " ".join(section("Layout").split())
    no_bench = sorted(p.name for p in PACKAGES if not (p / "benchmarks").is_dir())
    assert f"With `benchmarks/`: {len(PACKAGES) - len(no_bench)} packages; the other {len(no_bench)} have none" in text
    assert f"({', '.join(no_bench)})" in text
    slugs = re.compile(r"\b(" + "|".join(re.escape(p.name) for p in PACKAGES) + r")\b")
    for module in ("method", "baselines", "data"):
        named = text.split(f"Without `{module}.py`:")[1].split("Without `")[0].split("With `benchmarks")[0]
        lacking = {p.name for p in PACKAGES if not (source(p) / f"{module}.py").is_file()}
        assert set(slugs.findall(named)) == lacking, f"Layout's 'Without `{module}.py`:' should name {sorted(lacking)}"


def test_data_mirror_names_every_package_that_fetches_public_data():
    text = " ".join(section("Real data, offline").split())
    assert "../shared/data" in text and "ICML26_DATA_MIRROR" in text
    fetching = [
        p.name
        for p in PACKAGES
        if re.search(r"\b(fetch|fetch_file|load_planetoid)\(", "".join(f.read_text() for f in source(p).glob("*.py")))
    ]
    assert len(fetching) >= 5
    assert [name for name in fetching if name not in text] == []


def test_torch_packages_point_at_the_cpu_only_route():
    text = section("Installing PyTorch")
    assert "https://download.pytorch.org/whl/cpu" in text and "untested" in text and "[[tool.uv.index]]" in text
    assert "[[tool.uv.index]]" not in (ROOT / "pyproject.toml").read_text()  # uv.lock stays portable
    for pkg in PACKAGES:
        deps = tomllib.loads((pkg / "pyproject.toml").read_text())["project"]["dependencies"]
        if any(re.match(r"torch\b", d) for d in deps):
            assert "../../README.md#installing-pytorch" in install_section((pkg / "README.md").read_text()), pkg.name
