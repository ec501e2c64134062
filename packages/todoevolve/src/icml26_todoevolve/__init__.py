"""TodoEvolve: a meta-planner that architects a planning system per task, trained by IGPO (icml26 reference).

PlanFactory's design space (``PlannerConfig``: topology, initialization, adaptation, navigation), a simulated
tool-use world recording the official trajectory fields, the cognitive impedance and IGPO pair rules of the
official code, and the SFT -> DPO pipeline for a small policy (quick) or SmolLM2 (paper).
"""

from importlib.metadata import PackageNotFoundError, version

from .factory import ALL_CONFIGS, AXES, FIXED_PLANNERS, ParseError, PlannerConfig, parse_config
from .method import (
    dpo_loss,
    igpo_pairs,
    impedance,
    is_correct,
    log_impedance,
    parse_instruction,
    sft_examples,
    usage,
)
from .world import TASK_KINDS, Task, Trajectory, evaluate, execute, make_task, make_tasks

try:
    __version__ = version("icml26-todoevolve")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "ALL_CONFIGS",
    "AXES",
    "FIXED_PLANNERS",
    "TASK_KINDS",
    "ParseError",
    "PlannerConfig",
    "Task",
    "Trajectory",
    "dpo_loss",
    "evaluate",
    "execute",
    "igpo_pairs",
    "impedance",
    "is_correct",
    "log_impedance",
    "make_task",
    "make_tasks",
    "parse_config",
    "parse_instruction",
    "sft_examples",
    "usage",
]
