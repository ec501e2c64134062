import pytest
from ci import ROOT, distribution, junit_counts, members, select

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="2" skipped="3" tests="10" time="1.0"></testsuite></testsuites>
"""


def test_junit_counts(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(JUNIT)
    assert junit_counts(path) == (4, 3, 3)


def test_members_are_shared_tools_then_packages():
    names = [m.name for m in members()]
    assert names[:2] == ["shared", "tools"]
    assert names[2:] == sorted(names[2:])
    assert distribution(ROOT / "shared") == "icml26-shared"


def test_select_unknown_member():
    with pytest.raises(SystemExit, match="unknown members"):
        select(["no-such-paper"])
