import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_shared import SCHEMA_VERSION, Claim, Config, Experiment, Record, summarise


def claim(op=">=", threshold=0.0):
    return Claim("c1", "statement", "paper value", "m", op, threshold)


def test_deterministic_metric_is_a_plain_comparison():
    assert claim(">=", 1.0).decide([1.0]) == "holds"
    assert claim(">", 1.0).decide([1.0]) == "fails"
    assert claim("<=", 1.0).decide([0.5]) == "holds"
    assert claim("<", 0.5).decide([0.5]) == "fails"


def test_noisy_metric_needs_a_standard_error_of_margin():
    # mean 0.1, sem 0.1 -> unfavourable end 0.0 meets ">= 0"; mean 0.05 does not -> inconclusive
    assert claim(">=", 0.0).decide([0.0, 0.1, 0.2]) == "holds"
    assert claim(">=", 0.0).decide([-0.05, 0.05, 0.15]) == "inconclusive"
    assert claim(">=", 0.0).decide([-0.5, -0.4, -0.3]) == "fails"
    assert claim("<=", 0.0).decide([-0.05, 0.05, 0.15]) == "inconclusive"


def test_non_finite_is_inconclusive():
    assert claim().decide([1.0, float("nan")]) == "inconclusive"


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), st.floats(-1e6, 1e6))
def test_verdict_is_consistent_with_the_mean(values, threshold):
    s = summarise(values)
    up = claim(">=", threshold).decide(values)
    down = claim("<", threshold).decide(values)
    if up == "holds":
        assert s["mean"] >= threshold and down == "fails"
    if up == "fails":
        assert s["mean"] < threshold and down == "holds"
    assert (up == "inconclusive") == (down == "inconclusive")


def test_summarise():
    s = summarise([1.0, 2.0, 3.0])
    assert s["mean"] == 2.0 and s["std"] == 1.0 and math.isclose(s["sem"], 1 / math.sqrt(3)) and s["n"] == 3
    assert summarise([4.0])["sem"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"id": ""}, "id"), ({"op": "=="}, "op"), ({"threshold": float("nan")}, "threshold")],
)
def test_bad_claims(kwargs, name):
    base = {"id": "c", "statement": "s", "paper": "p", "metric": "m", "op": ">=", "threshold": 0.0}
    with pytest.raises(ValueError, match=f"{name}="):
        Claim(**{**base, **kwargs})


def test_bad_config_seeds():
    for seeds in [(), (1, 1), (-1,), (True,)]:
        with pytest.raises(ValueError, match="seeds="):
            Config(seeds=seeds)


def _experiment(measure=None, configs=None, claims=None):
    configs = configs or {"smoke": Config(seeds=(0,)), "quick": Config(seeds=(0, 1, 2)), "paper": Config()}
    return Experiment(
        name="toy",
        configs=configs,
        claims=claims or [claim(">=", 0.5)],
        measure=measure or (lambda cfg, out: {"m": [1.0 for _ in cfg.seeds]}),
    )


def test_experiment_run_writes_a_complete_record(tmp_path):
    record = _experiment().run("quick", tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION and data["paper"] == "toy"
    assert data["seeds"] == [0, 1, 2] and data["config"] == {"seeds": [0, 1, 2]}
    assert data["metrics"]["m"]["per_seed"] == [1.0, 1.0, 1.0]
    assert data["claims"][0]["verdict"] == "holds" and data["claims"][0]["measured"]["n"] == 3
    for key in ("id", "statement", "paper", "measured", "rule", "verdict"):
        assert key in data["claims"][0]
    assert {"python", "platform", "frameworks", "device"} <= set(data["environment"])
    assert Record.load(tmp_path / "results.json") == record


def test_experiment_records_figures(tmp_path):
    from icml26_shared import new_figure, save_figure

    def measure(cfg, out):
        fig, ax = new_figure()
        ax.plot([0, 1], [0, 1])
        save_figure(fig, out / "curve.png")
        return {"m": [1.0]}

    record = _experiment(measure).run("smoke", tmp_path)
    assert record.figures == ["curve.png"] and (tmp_path / "curve.png").stat().st_size > 1000


def test_experiment_missing_metric_is_an_error(tmp_path):
    with pytest.raises(KeyError, match="no metric 'm'"):
        _experiment(lambda cfg, out: {"other": [1.0]}).run("smoke", tmp_path)


def test_experiment_unknown_config_lists_known(tmp_path):
    with pytest.raises(ValueError, match=r"config='huge': expected one of \['paper', 'quick', 'smoke'\]"):
        _experiment().run("huge", tmp_path)


def test_experiment_requires_three_configs_and_distinct_claims():
    with pytest.raises(ValueError, match="configs="):
        _experiment(configs={"quick": Config()})
    with pytest.raises(ValueError, match="claims="):
        _experiment(claims=[claim(), claim()])


def test_fingerprint_follows_the_config():
    exp = _experiment()
    assert exp.fingerprint(Config(seeds=(0,))) == exp.fingerprint(Config(seeds=(0,)))
    assert exp.fingerprint(Config(seeds=(0,))) != exp.fingerprint(Config(seeds=(1,)))


@pytest.mark.parametrize(
    "content",
    ["{not json", "[]", json.dumps({"schema_version": 99}), json.dumps({"schema_version": SCHEMA_VERSION})],
)
def test_load_rejects_corrupt_records(tmp_path, content):
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(ValueError, match="results.json"):
        Record.load(path)


def test_load_rejects_unknown_verdict(tmp_path):
    record = _experiment().run("smoke", tmp_path)
    data = json.loads(record.to_json())
    data["claims"][0]["verdict"] = "probably"
    (tmp_path / "results.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="verdict 'probably'"):
        Record.load(tmp_path / "results.json")


def test_git_sha_ignores_rewritten_results_but_not_code(tmp_path):
    import subprocess

    from icml26_shared.records import git_sha

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text("1")
    (tmp_path / "code.py").write_text("x = 1")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    assert git_sha(tmp_path) is not None and not git_sha(tmp_path).endswith("+dirty")
    (tmp_path / "results" / "r.json").write_text("2")
    assert not git_sha(tmp_path).endswith("+dirty")
    (tmp_path / "code.py").write_text("x = 2")
    assert git_sha(tmp_path).endswith("+dirty")
    assert git_sha(tmp_path.parent / "no-such-dir") is None
