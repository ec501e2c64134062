import pytest
from release import (
    ReleaseError,
    check_tag,
    has_changelog_line,
    main,
    parse_tag,
    relative_links,
    resolve_link,
    rewrite_links,
)

PYPROJECT = '[project]\nname = "icml26-{slug}"\nversion = "{version}"\n'
README = "# {slug}\n\n![fig](../../results/{slug}/fig.png)\n\n## Changelog\n\n{changelog}\n## Citation\n"
URL = "https://github.com/owner/icml26"
SHA = "a" * 40


@pytest.fixture
def repo(tmp_path):
    """A miniature repository: packages/demo (0.2.0, changelog for 0.2.0), results/demo/fig.png, CONTRIBUTING.md."""
    pkg = tmp_path / "packages" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT.format(slug="demo", version="0.2.0"))
    changelog = "- 0.2.0: faster.\n- 0.1.0: first release.\n"
    (pkg / "README.md").write_text(README.format(slug="demo", changelog=changelog))
    (tmp_path / "results" / "demo").mkdir(parents=True)
    (tmp_path / "results" / "demo" / "fig.png").write_bytes(b"png")
    (tmp_path / "CONTRIBUTING.md").write_text("# contributing\n")
    return tmp_path


def test_parse_tag():
    assert parse_tag("icml26-sinkhorn-te-v0.1.0") == ("icml26-sinkhorn-te", "0.1.0")
    assert parse_tag("icml26-shared-v0.1.2") == ("icml26-shared", "0.1.2")


@pytest.mark.parametrize("tag", ["sinkhorn-te-v0.1.0", "icml26-sinkhorn-te-0.1.0", "icml26-x-v1", "v0.1.0", ""])
def test_bad_tag_shape(tag):
    with pytest.raises(ReleaseError, match=f"tag={tag!r}: expected <distribution>-v<version>"):
        parse_tag(tag)


def test_tag_matching_version_and_changelog(repo):
    member = check_tag("icml26-demo-v0.2.0", repo)
    assert (member.distribution, member.version, member.slug) == ("icml26-demo", "0.2.0", "demo")


def test_tag_version_mismatch_fails(repo):
    with pytest.raises(ReleaseError, match=r"version 0\.1\.0 disagrees with packages/demo/pyproject.toml .*'0\.2\.0'"):
        check_tag("icml26-demo-v0.1.0", repo)


def test_unknown_distribution_lists_known(repo):
    with pytest.raises(ReleaseError, match="no workspace member is named 'icml26-nope'; known: icml26-demo"):
        check_tag("icml26-nope-v0.2.0", repo)


def test_missing_changelog_line_fails(repo):
    readme = repo / "packages" / "demo" / "README.md"
    readme.write_text(README.format(slug="demo", changelog="- 0.1.0: first release.\n"))
    with pytest.raises(ReleaseError, match="has no changelog line for 0.2.0"):
        check_tag("icml26-demo-v0.2.0", repo)


def test_version_outside_the_changelog_section_does_not_count():
    text = "# x\n\n- 0.2.0: in the wrong section\n\n## Changelog\n\n- 0.1.0: first.\n\n## Citation\n- 0.2.0\n"
    assert not has_changelog_line(text, "0.2.0")
    assert has_changelog_line(text, "0.1.0")
    assert has_changelog_line("## Changelog\n\n### v0.3.1\n", "0.3.1")
    assert not has_changelog_line("## Changelog\n\n- 0.1.10: x\n", "0.1.1")


def test_links_rewritten_to_the_commit(repo):
    base = repo / "packages" / "demo"
    text = (
        "![fig](../../results/demo/fig.png)\n"
        '[guide](../../CONTRIBUTING.md#adding-a-paper "how")\n'
        "[results](../../results/demo)\n"
        "[ref]: ../../CONTRIBUTING.md\n"
        '<img src="../../results/demo/fig.png" width="300">\n'
        "[web](https://example.org) [anchor](#usage)\n"
        "```python\nprint('[x](../../nowhere.md)')\n```\n"
    )
    out = rewrite_links(text, base, repo, URL, SHA)
    raw = f"https://raw.githubusercontent.com/owner/icml26/{SHA}/results/demo/fig.png"
    assert f"![fig]({raw})" in out
    assert f'[guide]({URL}/blob/{SHA}/CONTRIBUTING.md#adding-a-paper "how")' in out
    assert f"[results]({URL}/tree/{SHA}/results/demo)" in out
    assert f"[ref]: {URL}/blob/{SHA}/CONTRIBUTING.md" in out
    assert f'<img src="{raw}" width="300">' in out
    assert "[web](https://example.org) [anchor](#usage)" in out
    assert "print('[x](../../nowhere.md)')" in out  # code is not a link
    assert relative_links(out) == []


def test_non_github_host_uses_raw_path(repo):
    out = rewrite_links(
        "![f](../../results/demo/fig.png)", repo / "packages" / "demo", repo, "https://git.example/x", "v1"
    )
    assert out == "![f](https://git.example/x/raw/v1/results/demo/fig.png)"


def test_link_to_a_missing_file_fails(repo):
    with pytest.raises(ReleaseError, match=r"link='../../results/demo/gone.png': results/demo/gone.png does not exist"):
        rewrite_links("![f](../../results/demo/gone.png)", repo / "packages" / "demo", repo, URL, SHA)


def test_link_outside_the_repository_fails(repo):
    with pytest.raises(ReleaseError, match=r"link='../../../shared/CONVENTIONS.md': points outside the repository"):
        resolve_link("../../../shared/CONVENTIONS.md", repo / "packages" / "demo", repo)


def test_bad_repo_url(repo):
    with pytest.raises(ReleaseError, match="repo_url='owner/icml26': expected an http"):
        rewrite_links("x", repo, repo, "owner/icml26", SHA)


def test_main_reports_a_mismatch_before_building(capsys, tmp_path):
    assert main(["icml26-sinkhorn-te-v9.9.9", "--repo-url", URL, "--dist", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "release: error: tag='icml26-sinkhorn-te-v9.9.9': version 9.9.9 disagrees" in err
    assert not any(tmp_path.iterdir())  # nothing built, nothing to upload


def test_main_needs_a_tag_or_a_package(capsys):
    assert main(["--repo-url", URL]) == 1
    assert "give a tag, or --dry-run --package SLUG" in capsys.readouterr().err
