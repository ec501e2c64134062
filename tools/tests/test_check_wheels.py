"""The wheel's licence and metadata as the package index shows them (issue 26, items 3 and 4)."""

import tarfile
import zipfile
from pathlib import Path

import pytest
from check_wheels import wheel_findings
from ci import ROOT, UV, sh
from release import ReleaseError, check_sdist_licence, long_description


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """sinkhorn-te's sdist and wheel from a plain ``uv build`` (no release rewriting)."""
    out = tmp_path_factory.mktemp("dist")
    sh(*UV, "build", "--package", "icml26-sinkhorn-te", "-q", "-o", out, cwd=ROOT)
    return next(out.glob("*.whl")), next(out.glob("*.tar.gz"))


def test_plain_build_carries_the_licence_and_index_metadata(built):
    wheel, sdist = built
    assert wheel_findings(wheel) == []
    check_sdist_licence(sdist)
    description = long_description(wheel)
    assert "](../" not in description and 'src="../' not in description
    assert "](https://raw.githubusercontent.com/OWNER/icml26/main/results/sinkhorn-te/" in description


def test_bare_wheel_is_reported(tmp_path):
    wheel = tmp_path / "demo-0.1.0-py3-none-any.whl"
    metadata = "Metadata-Version: 2.4\nName: demo\nVersion: 0.1.0\nLicense: MIT\n\n![f](../../results/demo/f.png)\n"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo-0.1.0.dist-info/METADATA", metadata)
    name = wheel.name
    assert wheel_findings(wheel) == [
        f"{name}: no .dist-info/licenses/LICENSE (license-files = ['LICENSE'] in its pyproject)",
        f"{name}: expected License-Expression: MIT and License-File: LICENSE, got (None, None)",
        f"{name}: METADATA has no Author",
        f"{name}: METADATA has no Keywords",
        f"{name}: METADATA has no Classifier",
        f"{name}: Project-URL should name Source and Documentation, names []",
        f"{name}: Description-Content-Type is None, not text/markdown",
        f"{name}: the long description has relative links, broken on the index: ['../../results/demo/f.png']",
    ]


def test_sdist_without_licence(tmp_path):
    (tmp_path / "demo-0.1.0").mkdir()
    (tmp_path / "demo-0.1.0" / "PKG-INFO").write_text("Name: demo\n")
    sdist = tmp_path / "demo-0.1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(tmp_path / "demo-0.1.0", arcname="demo-0.1.0")
    with pytest.raises(ReleaseError, match=r"demo-0.1.0.tar.gz: no demo-0.1.0/LICENSE in the sdist"):
        check_sdist_licence(sdist)


def test_licence_differs_from_the_repository(tmp_path):
    wheel = tmp_path / "demo-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo-0.1.0.dist-info/METADATA", "Name: demo\n\nx\n")
        zf.writestr("demo-0.1.0.dist-info/licenses/LICENSE", "Proprietary\n")
    assert f"{wheel.name}: its LICENSE differs from the repository's LICENSE" in wheel_findings(wheel)
    assert Path(ROOT / "LICENSE").read_text().startswith("MIT License")
