"""icml26-shared: the thin core every icml26 paper package builds on.

Logging, seeding, the checksum-verified dataset cache, experiment records with computed verdicts,
progress bars, headless figures and argument validation. No paper logic lives here.
"""

from importlib.metadata import PackageNotFoundError, version

from .cache import (
    ChecksumError,
    atomic_write_text,
    atomic_writer,
    cache_dir,
    cached,
    fetch,
    fingerprint,
    sha256_file,
    verify,
)
from .chat import ChatCompletionsClient, ChatError, ChatModel, LocalChatModel, image_part
from .datasets import Planetoid, fetch_file, load_fashion_mnist, load_planetoid
from .figures import new_figure, save_figure
from .llm import gemma3_gguf_path, load_gemma3, load_smollm2, smollm2_gguf_path
from .log import configure_logging, get_logger
from .progress import progress
from .records import (
    SCHEMA_VERSION,
    Claim,
    Config,
    DryRun,
    Experiment,
    Missing,
    Record,
    fashion_mnist_missing,
    manifest_missing,
    summarise,
)
from .seeding import DEVICES, Seeded, derive, resolve_device, run_seeds, run_units, seed_everything
from .validation import (
    check_array,
    check_choice,
    check_closed_interval,
    check_int,
    check_number,
    check_open_interval,
    check_positive,
    check_same_length,
    fail,
)

try:
    __version__ = version("icml26-shared")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "DEVICES",
    "SCHEMA_VERSION",
    "ChatCompletionsClient",
    "ChatError",
    "ChatModel",
    "ChecksumError",
    "Claim",
    "Config",
    "DryRun",
    "Experiment",
    "LocalChatModel",
    "Missing",
    "Planetoid",
    "Record",
    "Seeded",
    "atomic_write_text",
    "atomic_writer",
    "cache_dir",
    "cached",
    "check_array",
    "check_choice",
    "check_closed_interval",
    "check_int",
    "check_number",
    "check_open_interval",
    "check_positive",
    "check_same_length",
    "configure_logging",
    "derive",
    "fail",
    "fashion_mnist_missing",
    "fetch",
    "fetch_file",
    "fingerprint",
    "gemma3_gguf_path",
    "get_logger",
    "image_part",
    "load_fashion_mnist",
    "load_gemma3",
    "load_planetoid",
    "load_smollm2",
    "manifest_missing",
    "new_figure",
    "progress",
    "resolve_device",
    "run_seeds",
    "run_units",
    "save_figure",
    "seed_everything",
    "sha256_file",
    "smollm2_gguf_path",
    "summarise",
    "verify",
]
