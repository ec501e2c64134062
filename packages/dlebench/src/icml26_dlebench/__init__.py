"""DLEBench: evaluating small-scale object editing of instruction-based image editors (icml26).

The benchmark builder (small objects on real photographs, seven instruction types, reference edits),
simulated editors with known error modes, and the evaluation protocol: refined IF/VC rubrics judged in
whole-image, Tool-driven (crop and zoom) and Oracle-guided (reference shown) modes, by an offline metric
judge or an LMM behind a chat-completions endpoint.
"""

from importlib.metadata import PackageNotFoundError, version

from .data import INSTRUCTION_TYPES, EditItem, Instruction, build_benchmark, make_item
from .editors import EDITORS, Edit, Editor, apply_edit, ground_truth
from .imaging import zoom
from .method import MODES, RUBRICS, Judge, MetricJudge, Scores, agreement, bounding_box, level

try:
    __version__ = version("icml26-dlebench")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "EDITORS",
    "INSTRUCTION_TYPES",
    "MODES",
    "RUBRICS",
    "Edit",
    "EditItem",
    "Editor",
    "Instruction",
    "Judge",
    "MetricJudge",
    "Scores",
    "agreement",
    "apply_edit",
    "bounding_box",
    "build_benchmark",
    "ground_truth",
    "level",
    "make_item",
    "zoom",
]
