"""Experiment records: ``Config``, ``Claim``, ``Record`` and ``Experiment``.

A package measures; this module decides. ``Experiment.run`` calls the package's ``measure(config,
out_dir)``, which returns per-seed values of named metrics; each ``Claim`` turns the values of its
metric into a verdict with one rule for the whole repo (``Claim.decide``); the record with every
number, the environment and the git sha is written atomically to ``results.json``.

``Experiment.dry_run`` checks that a config (above all ``paper``, never run in CI) can start: the
package's optional ``build(config) -> DryRun`` hook makes the model and data pipeline at that size and
names what is missing; this module runs its one step where it fits and says why it skips it elsewhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import math
import operator
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .cache import MIRROR_ENV, atomic_write_text, cache_dir, fingerprint
from .log import get_logger
from .validation import check_int, check_number, fail

SCHEMA_VERSION = 1
VERDICTS = ("holds", "fails", "inconclusive")
CONFIG_NAMES = ("smoke", "quick", "paper")
QUICK = "quick"
LADDER = ("medium", "paper")  # the scale ladder above quick: each writes <root>/<slug>/<config>/
OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
FRAMEWORKS = ("numpy", "scipy", "torch", "jax", "sklearn", "ot", "pennylane", "qiskit", "diffusers")


@dataclass(frozen=True)
class Config:
    """Base of every package's run configuration: a frozen dataclass of everything a run depends on.

    Subclass it with more fields (all with defaults); ``seeds`` are the independent repetitions.
    """

    seeds: tuple[int, ...] = (0, 1, 2)

    def __post_init__(self) -> None:
        if not self.seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise fail("seeds", self.seeds, "a non-empty tuple of integers >= 0")
        if len(set(self.seeds)) != len(self.seeds):
            raise fail("seeds", self.seeds, "distinct seeds")

    def as_dict(self) -> dict[str, Any]:
        """The values in JSON form (tuples become lists), as stored in results.json."""
        return json.loads(json.dumps(dataclasses.asdict(self), default=str))


def summarise(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample std (ddof=1), standard error and n of per-seed values."""
    arr = np.asarray(values, dtype=float)
    n = int(arr.size)
    finite = bool(np.isfinite(arr).all())
    std = float(arr.std(ddof=1)) if n > 1 and finite else 0.0
    return {
        "per_seed": [float(v) for v in arr],
        "mean": float(arr.mean()) if finite else float("nan"),
        "std": std,
        "sem": std / math.sqrt(n) if n > 1 else 0.0,
        "n": n,
    }


@dataclass(frozen=True)
class Claim:
    """A headline claim of the paper as data, decided by ``mean(metric) <op> threshold``.

    The metric is measured once per seed (or per replication). The verdict uses the standard error
    (sem) of its mean:

    * ``holds``: the rule is met even at the unfavourable end, mean -/+ sem;
    * ``fails``: the rule is missed even at the favourable end, mean +/- sem;
    * ``inconclusive``: in between, or a value is not finite.

    A deterministic metric (one value, sem 0) reduces to the plain comparison. Relative claims
    ("A beats B") are measured as paired per-seed differences, so the threshold is a constant.
    """

    id: str
    statement: str
    paper: str  # what the paper reports, and where (e.g. "+11 pp on SHD, Table 2")
    metric: str
    op: str
    threshold: float

    def __post_init__(self) -> None:
        if not self.id or not self.id.replace("_", "").replace("-", "").isalnum():
            raise fail("id", self.id, "a non-empty identifier of letters, digits, '-' and '_'")
        if self.op not in OPS:
            raise fail("op", self.op, f"one of {list(OPS)}")
        check_number("threshold", self.threshold)

    @property
    def rule(self) -> str:
        return f"mean({self.metric}) {self.op} {self.threshold:g}, beyond one standard error"

    def decide(self, values: Sequence[float]) -> str:
        """The verdict for the per-seed ``values`` of this claim's metric."""
        s = summarise(values)
        if s["n"] == 0 or not math.isfinite(s["mean"]):
            return "inconclusive"
        meets = OPS[self.op]
        lower_is_better = self.op in ("<=", "<")
        unfavourable = s["mean"] + s["sem"] if lower_is_better else s["mean"] - s["sem"]
        favourable = s["mean"] - s["sem"] if lower_is_better else s["mean"] + s["sem"]
        if meets(unfavourable, self.threshold):
            return "holds"
        if not meets(favourable, self.threshold):
            return "fails"
        return "inconclusive"


@dataclass
class Record:
    """Everything one run measured; serialised as ``results.json`` (schema ``SCHEMA_VERSION``)."""

    paper: str
    version: str
    config_name: str
    config: dict[str, Any]
    seeds: list[int]
    metrics: dict[str, dict[str, Any]]
    claims: list[dict[str, Any]]
    environment: dict[str, Any]
    git_sha: str | None
    wall_seconds: float
    fingerprint: str
    figures: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
    # cpu_seconds (this process and its finished workers) and the 1-minute load average at start and end,
    # so that a run timed on a loaded machine shows as such. Records written before 0.1.4 have none.
    timing: dict[str, float] = field(default_factory=dict)

    @property
    def holding(self) -> int:
        return sum(c["verdict"] == "holds" for c in self.claims)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=False, allow_nan=True) + "\n"

    def write(self, path: str | os.PathLike) -> Path:
        atomic_write_text(path, self.to_json())
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Record:
        """Read a ``results.json``; a file that does not parse or has another schema raises ValueError."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: unreadable results.json ({err})") from None
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            got = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"{path}: schema_version={got!r}: expected {SCHEMA_VERSION}")
        names = {f.name for f in dataclasses.fields(cls)}
        optional = {f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING}
        missing = names - optional - set(data)
        if missing:
            raise ValueError(f"{path}: results.json lacks keys {sorted(missing)}")
        for claim in data["claims"]:
            if claim.get("verdict") not in VERDICTS:
                raise ValueError(f"{path}: claim {claim.get('id')!r} has verdict {claim.get('verdict')!r}")
        return cls(**{k: data[k] for k in names if k in data})


def run_dir(root: str | os.PathLike, slug: str, config: str) -> Path:
    """Where a paper's run of ``config`` writes under a results root: ``<root>/<slug>/<config>/`` for the
    scale ladder's medium and paper, so they sit beside quick's record; ``<root>/<slug>/`` for quick (the
    committed snapshot every tool reads) and smoke (the tests' runs)."""
    return Path(root) / slug / config if config in LADDER else Path(root) / slug


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its children that have finished (worker pools)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def load_average() -> float:
    """The 1-minute load average (NaN where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return math.nan


def platform_line(env: dict[str, Any] | None = None) -> str:
    """One line naming the machine: CPU model and count, torch CPU capability and threads, versions."""
    env = env or environment()
    frameworks = ", ".join(f"{k} {v}" for k, v in sorted(env.get("frameworks", {}).items()))
    torch = (
        f"; torch CPU capability {env['torch_cpu_capability']}, {env.get('torch_threads')} threads"
        if "torch_cpu_capability" in env
        else ""
    )
    threads = ", ".join(f"{k}={v}" for k, v in env.get("thread_variables", {}).items()) or "no thread variables set"
    return (
        f"{env.get('cpu_model', '?')} x {env.get('cpu_count', '?')}; python {env.get('python')}"
        f"{torch}; {frameworks or 'no frameworks imported'}; {threads}"
    )


def git_sha(cwd: str | os.PathLike | None = None) -> str | None:
    """The checkout's HEAD sha, ``+dirty`` when tracked code has uncommitted changes (changes under the
    top-level ``results/`` folder, which runs themselves rewrite, do not count); None outside git."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "-c", "core.quotepath=off", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = [line for line in changed if not line[3:].startswith("results/")]
    return sha + ("+dirty" if dirty else "")


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ATEN_CPU_CAPABILITY")


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def environment() -> dict[str, Any]:
    """What a result can depend on besides the code: Python, platform, CPU model, thread settings, the
    versions of the frameworks this process imported, torch's CPU kernel capability and thread counts,
    and the device. ``icml26 verify`` prints it so that a difference between machines can be traced."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "thread_variables": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ},
        "frameworks": {},
        "device": "cpu",
    }
    for name in FRAMEWORKS:
        module = sys.modules.get(name)
        if module is not None:
            env["frameworks"][name] = getattr(module, "__version__", "unknown")
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(AttributeError, RuntimeError):
            env["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        env["torch_threads"] = torch.get_num_threads()
        if torch.cuda.is_available():
            env["device"] = torch.cuda.get_device_name(0)
    return env


RESULTS_ENV = "ICML26_RESULTS"
DRY_RUN_DEVICES = ("auto", "cpu", "cuda")


def _dry_run_device(device: str) -> str:
    """``cpu``, or ``cuda`` when asked for and visible; ``auto`` is ``cuda`` when torch sees a GPU.
    A package without torch runs its step on ``cpu``."""
    if device not in DRY_RUN_DEVICES:
        raise fail("device", device, f"one of {list(DRY_RUN_DEVICES)}")
    if device == "cpu":
        return device
    if importlib.util.find_spec("torch") is None:
        if device == "cuda":
            raise fail("device", device, "'cpu' or 'auto' (torch is not installed)")
        return "cpu"
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise fail("device", device, "'cpu' or 'auto' (torch sees no CUDA GPU)")
    return "cuda" if device != "cpu" and torch.cuda.is_available() else "cpu"


def default_results_root() -> Path:
    """Where a run writes when no ``--out`` is given: ``$ICML26_RESULTS``, else the user's data folder
    (``platformdirs.user_data_dir("icml26")/results``). Never the repository's committed ``results/``:
    that snapshot is rewritten only on request (``--out results``, ``make reproduce OUT=results``)."""
    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("icml26")) / "results"


def source_hash(module: str) -> str:
    """sha256 over the ``.py`` files of the top-level package of ``module`` (found without importing it)."""
    top = module.split(".")[0]
    spec = importlib.util.find_spec(top)
    digest = hashlib.sha256()
    if spec is None:
        return "unknown"
    roots = list(spec.submodule_search_locations or []) or [str(Path(spec.origin or "").parent)]
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


Measure = Callable[[Any, Path], Mapping[str, Sequence[float]]]
STEP_CPU_LIMITS = (2 * 2**30, 30.0)  # bytes, seconds: a dry run's one step on CPU above either is skipped


def _size(n: float, unit: str = "B") -> str:
    """``1.5 GB``, ``3.2 M``: a count in powers of 1000 with its unit, for the dry-run report."""
    for prefix in ("", "k", "M", "G", "T", "P", "E"):
        if abs(n) < 1000 or prefix == "E":
            return f"{n:.3g} {prefix}{unit}".rstrip()
        n /= 1000
    raise AssertionError("unreachable")


def data_locations(relpath: str) -> list[Path]:
    """Where a data set or weights file ``relpath`` (e.g. ``"imagenet/train"``) is looked for, in order:
    ``$ICML26_DATA_MIRROR/<relpath>`` when that variable is set, then ``<cache>/data/<relpath>``."""
    mirror = os.environ.get(MIRROR_ENV)
    return ([Path(mirror).expanduser() / relpath] if mirror else []) + [cache_dir() / "data" / relpath]


def find_data(relpath: str) -> Path | None:
    """The first of ``data_locations(relpath)`` that exists, or None."""
    return next((p for p in data_locations(relpath) if p.exists()), None)


@dataclass(frozen=True)
class Missing:
    """A data set or weights a config needs that this machine lacks: what, where it is expected, where it
    comes from and how large the download is."""

    name: str
    path: str
    source: str
    size_bytes: int

    @classmethod
    def unless_found(cls, name: str, relpath: str, source: str, size_bytes: int) -> Missing | None:
        """None when ``relpath`` is in one of ``data_locations``; else the Missing entry naming them all."""
        if find_data(relpath) is not None:
            return None
        return cls(name, " or ".join(map(str, data_locations(relpath))), source, size_bytes)

    def line(self) -> str:
        return f"missing {self.name}: expected at {self.path} ({_size(self.size_bytes)} from {self.source})"


def manifest_missing(prefix: str) -> tuple[Missing, ...]:
    """The files of the data manifest under ``prefix`` (e.g. ``"planetoid/ind.cora."``) that neither the cache
    nor ``$ICML26_DATA_MIRROR`` holds (by name, as ``fetch`` looks), as one entry: how many of how many files,
    their total size and where they come from; () when every file is there."""
    from .cache import _mirror_index
    from .datasets import manifest

    rows = {path: row for path, row in manifest().items() if path.startswith(prefix)}
    if not rows:
        raise fail("prefix", prefix, "the start of a path in the data manifest (e.g. 'planetoid/ind.cora.')")
    mirror = os.environ.get(MIRROR_ENV)
    in_mirror = _mirror_index(str(Path(mirror).resolve())) if mirror and Path(mirror).is_dir() else {}
    absent = [p for p in rows if not (cache_dir() / "data" / p).is_file() and Path(p).name not in in_mirror]
    if not absent:
        return ()
    urls = [rows[p][2] for p in absent]
    source = urls[0] if len(urls) == 1 else urls[0].rsplit("/", 1)[0] + "/..."  # the first file's folder
    where = " or ".join(str(p) for p in data_locations(prefix + "*"))
    return (Missing(f"{prefix}* ({len(absent)} of {len(rows)} files)", where, source, sum(rows[p][1] for p in absent)),)


FASHION_GZ_BYTES = {  # the gzipped IDX files of zalandoresearch/fashion-mnist
    "train-images-idx3-ubyte": 26_421_880,
    "train-labels-idx1-ubyte": 29_515,
    "t10k-images-idx3-ubyte": 4_422_102,
    "t10k-labels-idx1-ubyte": 5_148,
}


def fashion_mnist_missing(folder: str | os.PathLike | None = None) -> tuple[Missing, ...]:
    """The Fashion-MNIST IDX files ``load_fashion_mnist(folder=folder)`` would not find."""
    from .datasets import FASHION_DIR

    root = Path(folder) if folder is not None else FASHION_DIR
    return tuple(
        Missing(
            f"Fashion-MNIST {name}",
            f"{root}/{name}(.gz)",
            "`apt-get install dataset-fashion-mnist`, or github.com/zalandoresearch/fashion-mnist (pass folder=)",
            size,
        )
        for name, size in FASHION_GZ_BYTES.items()
        if not any((root / f).is_file() for f in (f"{name}.gz", name))
    )


@dataclass(frozen=True)
class DryRun:
    """What a package's ``build(config)`` hook made: the model and data pipeline at the config's size.

    ``parameters``, ``memory_bytes`` and ``flops`` describe the whole run (trained parameters, an estimate
    of peak memory and of total floating-point operations). ``step(device)`` does one optimisation step
    or one evaluation batch at that size (on stand-in data of the real shapes where data is missing);
    ``step_memory_bytes`` and ``step_cpu_seconds`` estimate it, so that the layer can skip it where it
    would not fit. A hook with no step gives ``skip``, why. ``devices``: where the package's code can run the
    step (a CPU-only pipeline says ``("cpu",)``, and its step is skipped on a GPU, saying so).
    """

    summary: str
    parameters: int
    memory_bytes: float
    flops: float
    step: Callable[[str], Any] | None = None
    step_memory_bytes: float = 0.0
    step_cpu_seconds: float = 0.0
    skip: str = ""
    missing: tuple[Missing, ...] = ()
    devices: tuple[str, ...] = ("cpu", "cuda")

    def __post_init__(self) -> None:
        check_int("parameters", self.parameters, 0)
        for name in ("memory_bytes", "flops", "step_memory_bytes", "step_cpu_seconds"):
            if check_number(name, getattr(self, name)) < 0:
                raise fail(name, getattr(self, name), "an estimate >= 0")
        if self.step is None and not self.skip:
            raise fail("skip", self.skip, "the reason there is no step (step is None)")
        if not all(isinstance(m, Missing) for m in self.missing):
            raise fail("missing", self.missing, "a tuple of Missing")
        if not self.devices or not set(self.devices) <= {"cpu", "cuda"}:
            raise fail("devices", self.devices, "a non-empty tuple of 'cpu' and/or 'cuda'")

    def fits(self, device: str) -> str:
        """Why the step is skipped on ``device`` (CPU: over 2 GB or 30 s; CUDA: over its free memory); ''
        when it fits."""
        if device not in self.devices:
            return f"the package runs this step on {' and '.join(self.devices)} only, not on {device}"
        if device == "cpu":
            memory, seconds = STEP_CPU_LIMITS
            if self.step_memory_bytes > memory:
                return f"needs ~{_size(self.step_memory_bytes)} (> {_size(memory)} on CPU)"
            if self.step_cpu_seconds > seconds:
                return f"takes ~{self.step_cpu_seconds:.0f} s (> {seconds:.0f} s on CPU)"
            return ""
        import torch

        free, _total = torch.cuda.mem_get_info()
        if self.step_memory_bytes > free:
            return f"needs ~{_size(self.step_memory_bytes)} (> {_size(free)} free on {device})"
        return ""


@dataclass
class DryRunReport:
    """The outcome of ``Experiment.dry_run``: what was built, what the one step did, what is missing, and
    the error that stopped it, if any. ``ok`` (exit 0) when nothing is missing and nothing failed."""

    paper: str
    config_name: str
    device: str
    built: DryRun | None = None
    step: str = ""
    error: str = ""

    @property
    def missing(self) -> tuple[Missing, ...]:
        return self.built.missing if self.built else ()

    @property
    def ok(self) -> bool:
        return not self.error and not self.missing

    def lines(self) -> list[str]:
        head = f"{self.paper} --config {self.config_name} --dry-run on {self.device}: config valid"
        if self.built is None:
            return [head, self.error or "no build hook: nothing built"]
        b = self.built
        out = [
            head,
            f"built: {b.summary}",
            f"parameters: {b.parameters:,}; whole run: ~{_size(b.memory_bytes)} memory, ~{_size(b.flops, 'FLOP')}",
            f"one step: {self.step}",
        ]
        return out + [m.line() for m in b.missing] + ([self.error] if self.error else [])


@dataclass(frozen=True)
class Experiment:
    """A paper's reproduction: its configs, its claims and the function that measures.

    ``measure(config, out_dir)`` trains/evaluates, may save figures into ``out_dir`` (PNG), and
    returns ``{metric: per-seed values}``. ``run`` does the rest, the same way for every paper.
    """

    name: str
    configs: Mapping[str, Config]
    claims: Sequence[Claim]
    measure: Measure
    distribution: str = ""  # defaults to icml26-<name>
    build: Callable[[Any], DryRun] | None = None  # the dry-run hook (``dry_run``)

    def __post_init__(self) -> None:
        missing = [c for c in CONFIG_NAMES if c not in self.configs]
        if missing:
            raise fail("configs", sorted(self.configs), f"the configs {list(CONFIG_NAMES)}; missing {missing}")
        ids = [c.id for c in self.claims]
        if not ids or len(set(ids)) != len(ids):
            raise fail("claims", ids, "a non-empty list of claims with distinct ids")

    @property
    def version(self) -> str:
        try:
            return metadata.version(self.distribution or f"icml26-{self.name}")
        except metadata.PackageNotFoundError:
            return "0+unknown"

    def config(self, name: str) -> Config:
        if name not in self.configs:
            raise fail("config", name, f"one of {sorted(self.configs)} for paper {self.name!r}")
        return self.configs[name]

    def dry_run(self, config: str = "paper", device: str = "auto") -> DryRunReport:
        """Validate ``config``, build it through the ``build`` hook and run its one step on ``device``
        where it fits. A hook or step that raises is reported as the error (one line), not raised; a
        bad config name or device is a ValueError."""
        cfg = dataclasses.replace(self.config(config))  # re-runs the config's validation
        device = _dry_run_device(device)
        report = DryRunReport(self.name, config, device)
        if self.build is None:
            return report
        log = get_logger(self.name)
        try:
            report.built = built = self.build(cfg)
            if not isinstance(built, DryRun):
                raise TypeError(f"build() returned a {type(built).__name__}, not a DryRun")
        except Exception as err:  # the report names it; --verbose logs the traceback
            log.debug("build failed", exc_info=True)
            report.built, report.error = None, f"build failed: {type(err).__name__}: {err}"
            return report
        skip = built.skip if built.step is None else built.fits(device)
        if skip:
            report.step = f"skipped: {skip}"
            return report
        start = time.perf_counter()
        try:
            built.step(device)
        except Exception as err:
            log.debug("step failed", exc_info=True)
            report.step = f"failed on {device}"
            report.error = f"step failed: {type(err).__name__}: {err}"
            return report
        report.step = f"ran on {device} in {time.perf_counter() - start:.2f} s"
        return report

    def fingerprint(self, config: Config) -> str:
        """What a result depends on: the config's values, the package version and its source code."""
        return fingerprint(
            {"config": config.as_dict(), "version": self.version, "source": source_hash(self.measure.__module__)}
        )

    def run(self, config: str | Config = "quick", out_dir: str | os.PathLike | None = None) -> Record:
        """Measure under ``config`` (a name or a Config), decide every claim, write ``results.json`` into
        ``out_dir`` (default: ``run_dir(default_results_root(), name, config)``)."""
        if isinstance(config, str):
            config_name, cfg = config, self.config(config)
        else:
            matches = [k for k, v in self.configs.items() if v == config]
            config_name, cfg = (matches[0] if matches else "custom"), config
        out = Path(out_dir) if out_dir is not None else run_dir(default_results_root(), self.name, config_name)
        out.mkdir(parents=True, exist_ok=True)
        log = get_logger(self.name)
        log.info("running %s with config %r -> %s", self.name, config_name, out)
        start, cpu_start, load_start = time.perf_counter(), cpu_seconds(), load_average()
        measured = dict(self.measure(cfg, out))
        wall = time.perf_counter() - start
        timing = {
            "cpu_seconds": round(cpu_seconds() - cpu_start, 1),
            "load_start": load_start,
            "load_end": load_average(),
        }
        metrics = {k: summarise(v) for k, v in measured.items()}
        claims = []
        for claim in self.claims:
            if claim.metric not in metrics:
                raise KeyError(f"measure() returned no metric {claim.metric!r}, needed by claim {claim.id!r}")
            verdict = claim.decide(metrics[claim.metric]["per_seed"])
            claims.append(
                {
                    "id": claim.id,
                    "statement": claim.statement,
                    "paper": claim.paper,
                    "metric": claim.metric,
                    "measured": {k: metrics[claim.metric][k] for k in ("mean", "std", "sem", "n")},
                    "rule": claim.rule,
                    "verdict": verdict,
                }
            )
        record = Record(
            paper=self.name,
            version=self.version,
            config_name=config_name,
            config=cfg.as_dict(),
            seeds=list(cfg.seeds),
            metrics=metrics,
            claims=claims,
            environment=environment(),
            git_sha=git_sha(),
            wall_seconds=round(wall, 3),
            fingerprint=self.fingerprint(cfg),
            figures=sorted(p.name for p in out.glob("*.png")),
            timing=timing,
        )
        record.write(out / "results.json")
        log.info("%s: %d/%d claims hold in %.1f s", self.name, record.holding, len(claims), wall)
        return record
