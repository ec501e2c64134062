"""The ``--dry-run`` layer: ``Experiment.dry_run``, ``DryRun``/``Missing`` and ``icml26 run --dry-run``."""

import importlib
import subprocess
import sys
import textwrap

import pytest
from icml26_shared import Claim, Config, Experiment
from icml26_shared.cli import main, paper_main
from icml26_shared.records import (
    DryRun,
    Missing,
    data_locations,
    fashion_mnist_missing,
    find_data,
    manifest_missing,
)

CLAIMS = [Claim("positive", "The score is positive.", "1.0 (Fig. 1)", "score", ">", 0.0)]
CONFIGS = {"smoke": Config(seeds=(0,)), "quick": Config(), "paper": Config(seeds=(0, 1, 2, 3))}


def measure(config, out_dir):
    return {"score": [1.0 for _ in config.seeds]}


def experiment(build=None):
    return Experiment(name="alpha", configs=CONFIGS, claims=CLAIMS, measure=measure, build=build)


def built(**kw):
    values = {"summary": "a linear model", "parameters": 10, "memory_bytes": 3e9, "flops": 2e12}
    return DryRun(**(values | kw))


def test_without_a_hook_the_config_is_validated_and_nothing_built():
    report = experiment().dry_run("paper", "cpu")
    assert report.ok and report.built is None
    assert report.lines() == ["alpha --config paper --dry-run on cpu: config valid", "no build hook: nothing built"]


def test_a_step_that_fits_runs_once_on_the_device():
    calls = []
    report = experiment(lambda cfg: built(step=calls.append, step_memory_bytes=1e6, step_cpu_seconds=0.1)).dry_run(
        "paper", "cpu"
    )
    assert report.ok and calls == ["cpu"] and report.step.startswith("ran on cpu in ")
    text = "\n".join(report.lines())
    assert "built: a linear model" in text and "parameters: 10; whole run: ~3 GB memory, ~2 TFLOP" in text


@pytest.mark.parametrize(
    ("estimates", "reason"),
    [
        ({"step_memory_bytes": 3e9}, "skipped: needs ~3 GB (> 2.15 GB on CPU)"),
        ({"step_cpu_seconds": 45.0}, "skipped: takes ~45 s (> 30 s on CPU)"),
    ],
)
def test_a_step_over_the_cpu_limits_is_skipped_with_the_reason(estimates, reason):
    calls = []
    report = experiment(lambda cfg: built(step=calls.append, **estimates)).dry_run("paper", "cpu")
    assert report.ok and calls == [] and report.step == reason


def test_a_cpu_only_step_is_skipped_elsewhere_saying_so():
    assert built(step=print, devices=("cpu",)).fits("cuda") == "the package runs this step on cpu only, not on cuda"
    assert built(step=print, devices=("cpu",)).fits("cpu") == ""
    with pytest.raises(ValueError, match=r"devices=\('tpu',\): expected a non-empty tuple of 'cpu' and/or 'cuda'"):
        built(step=print, devices=("tpu",))


def test_no_step_needs_a_reason_and_the_reason_is_printed():
    with pytest.raises(ValueError, match="skip='': expected the reason there is no step"):
        built()
    report = experiment(lambda cfg: built(skip="the paper's model is an API")).dry_run("paper", "cpu")
    assert report.ok and report.step == "skipped: the paper's model is an API"


@pytest.mark.parametrize(
    ("kw", "name"),
    [({"parameters": -1}, "parameters"), ({"flops": float("nan")}, "flops"), ({"memory_bytes": -1.0}, "memory_bytes")],
)
def test_bad_estimates_name_the_field(kw, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        built(skip="x", **kw)


def test_missing_data_is_one_line_each_and_not_ok(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    assert data_locations("imagenet/train") == [
        tmp_path / "mirror/imagenet/train",
        tmp_path / "cache/data/imagenet/train",
    ]
    missing = Missing.unless_found("ImageNet-1k train", "imagenet/train", "https://image-net.org", 147_000_000_000)
    report = experiment(lambda cfg: built(skip="no data", missing=(missing,))).dry_run("paper", "cpu")
    assert not report.ok and not report.error
    assert report.lines()[-1] == (
        f"missing ImageNet-1k train: expected at {tmp_path}/mirror/imagenet/train or "
        f"{tmp_path}/cache/data/imagenet/train (147 GB from https://image-net.org)"
    )
    (tmp_path / "cache/data/imagenet/train").mkdir(parents=True)
    assert find_data("imagenet/train") == tmp_path / "cache/data/imagenet/train"
    assert Missing.unless_found("ImageNet-1k train", "imagenet/train", "https://image-net.org", 1) is None


def test_a_build_or_step_that_raises_is_the_error_line_not_a_traceback():
    def broken(cfg):
        raise RuntimeError("shapes do not match")

    report = experiment(broken).dry_run("paper", "cpu")
    assert not report.ok and report.lines()[-1] == "build failed: RuntimeError: shapes do not match"
    report = experiment(lambda cfg: built(step=lambda device: 1 / 0)).dry_run("paper", "cpu")
    assert not report.ok and report.step == "failed on cpu"
    assert report.lines()[-1] == "step failed: ZeroDivisionError: division by zero"
    report = experiment(lambda cfg: "a model").dry_run("paper", "cpu")
    assert report.error == "build failed: TypeError: build() returned a str, not a DryRun"


def test_bad_config_and_device_are_value_errors_naming_them():
    with pytest.raises(ValueError, match=r"config='medium': expected one of \['paper', 'quick', 'smoke'\]"):
        experiment().dry_run("medium", "cpu")
    with pytest.raises(ValueError, match=r"device='tpu': expected one of \['auto', 'cpu', 'cuda'\]"):
        experiment().dry_run("paper", "tpu")


MODULE = """
from icml26_shared import Claim, Config, Experiment
from icml26_shared.records import DryRun, Missing


def measure(config, out_dir):
    return {{"score": [1.0 for _ in config.seeds]}}


def build(config):
    missing = Missing.unless_found("toy corpus", "toy/corpus.txt", "https://example.org/toy", 2_000_000)
    return DryRun("{slug}: a toy model", 3, 1e6, 1e9, step=lambda device: None, missing=(missing,) if missing else ())


CONFIGS = {{"smoke": Config(seeds=(0,)), "quick": Config(), "paper": Config(seeds=(0, 1, 2, 3))}}
CLAIMS = [Claim("positive", "The score is positive.", "1.0 (Fig. 1)", "score", ">", 0.0)]
EXPERIMENT = Experiment(name="{slug}", configs=CONFIGS, claims=CLAIMS, measure=measure, distribution="fake-{slug}",
                        build=build)
"""


@pytest.fixture
def hooked_paper(tmp_path, monkeypatch):
    """A fake installed paper 'delta' with a build hook that needs a 'toy/corpus.txt' data file."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "fake_delta.py").write_text(MODULE.format(slug="delta"))
    info = site / "fake_delta-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-delta\nVersion: 0.1.0\nSummary: Fake delta\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("[icml26.papers]\ndelta = fake_delta:EXPERIMENT\n"))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICML26_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ICML26_DATA_MIRROR", raising=False)
    importlib.invalidate_caches()
    yield tmp_path
    sys.modules.pop("fake_delta", None)


def test_cli_dry_run_names_the_missing_file_exits_1_then_0_once_present(hooked_paper, capsys):
    assert main(["run", "delta", "--config", "paper", "--dry-run", "--device", "cpu"]) == 1
    out = capsys.readouterr().out
    assert "built: delta: a toy model" in out and "one step: ran on cpu in " in out
    assert f"missing toy corpus: expected at {hooked_paper}/cache/data/toy/corpus.txt (2 MB from " in out
    assert "Traceback" not in out and not (hooked_paper / "results").exists()  # a dry run writes nothing
    (hooked_paper / "cache/data/toy").mkdir(parents=True)
    (hooked_paper / "cache/data/toy/corpus.txt").write_text("x")
    assert paper_main("delta", ["run", "--config", "smoke", "--dry-run", "--device", "cpu"]) == 0
    assert "delta --config smoke --dry-run on cpu: config valid" in capsys.readouterr().out


def test_cli_dry_run_bad_arguments_are_one_line(hooked_paper, capsys):
    assert main(["run", "delta", "--config", "medium", "--dry-run"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("config='medium': expected one of ['paper', 'quick', 'smoke'] for paper 'delta'")
    )
    assert main(["run", "delta", "--config", "paper", "--dry-run", "--device", "gpu0"]) == 2
    assert "device='gpu0': expected one of ['auto', 'cpu', 'cuda']" in capsys.readouterr().err
    assert main(["run", "delta", "--config", "smoke", "--device", "cpu"]) == 2
    assert "--device='cpu': expected no value without --dry-run" in capsys.readouterr().err


def test_installed_command_prints_no_traceback_for_a_missing_data_set(hooked_paper):
    proc = subprocess.run(
        [sys.executable, "-m", "icml26_shared", "run", "delta", "--config", "paper", "--dry-run", "--device", "cpu"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and "missing toy corpus" in proc.stdout and "Traceback" not in proc.stderr


def test_manifest_files_absent_from_cache_and_mirror_are_one_missing_entry_with_url_and_size(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ICML26_DATA_MIRROR", raising=False)
    (all_files,) = manifest_missing("planetoid/ind.cora.")
    assert all_files.name == "planetoid/ind.cora.* (8 of 8 files)" and all_files.size_bytes > 100_000
    assert all_files.source.startswith("https://raw.githubusercontent.com/kimiyoung/planetoid/")
    assert all_files.path == f"{tmp_path}/cache/data/planetoid/ind.cora.*"
    cached = tmp_path / "cache/data/planetoid/ind.cora.x"
    cached.parent.mkdir(parents=True)
    cached.write_text("x")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "ind.cora.y").write_text("x")
    monkeypatch.setenv("ICML26_DATA_MIRROR", str(mirror))
    (six,) = manifest_missing("planetoid/ind.cora.")
    assert six.name == "planetoid/ind.cora.* (6 of 8 files)" and six.size_bytes < all_files.size_bytes
    with pytest.raises(ValueError, match="prefix='imagenet/': expected the start of a path in the data manifest"):
        manifest_missing("imagenet/")


def test_fashion_mnist_files_absent_from_the_folder_are_missing(tmp_path):
    (tmp_path / "t10k-labels-idx1-ubyte").write_text("x")
    (tmp_path / "train-labels-idx1-ubyte.gz").write_text("x")
    missing = fashion_mnist_missing(tmp_path)
    assert [m.name for m in missing] == [
        "Fashion-MNIST train-images-idx3-ubyte",
        "Fashion-MNIST t10k-images-idx3-ubyte",
    ]
    assert missing[0].line().startswith(f"missing Fashion-MNIST train-images-idx3-ubyte: expected at {tmp_path}/")
    assert "26.4 MB from `apt-get install dataset-fashion-mnist`" in missing[0].line()
