"""PlanFactory: the design space of planning systems and the fixed planners that are points in it.

The official PlanFactory (``EvolveCore/PlanFactory``) decomposes every planning system into a ``BasePlanning``
subclass with ``topology_initialize(task)`` (the plan's structure and how it is instantiated) and
``adaptation(task, step)`` (called every ``summary_interval`` steps), while *navigation* is how the plan is
injected into the executor's messages. The paper names the four axes Topology, Initialization, Adaptation and
Navigation. Here a planning system is one point ``PlannerConfig`` of the discrete grid below (the meta-planner's
"program" is this structured configuration, never generated Python that would be executed).

Axes (values are ours [INF], chosen to span the official planners):

* topology: ``linear`` (a to-do list), ``dag`` (sub-goals with dependency edges), ``tree`` (nested sub-goals,
  finished subtrees summarised), ``hierarchical`` (a manager delegating branches to sub-agents);
* initialization: ``direct`` (a one-line plan, the executor discovers sub-goals itself), ``decompose`` (the
  sub-goals written out), ``verified`` (decomposed, then every tool probed once before execution);
* adaptation: ``none``, ``periodic`` (a summary every ``summary_interval`` steps that re-checks results),
  ``on_failure`` (replanning right after a failed tool call);
* navigation: ``sequential`` (one directive per step), ``parallel`` (every ready sub-goal issued at once).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from icml26_shared import check_choice

TOPOLOGIES = ("linear", "dag", "tree", "hierarchical")
INITIALIZATIONS = ("direct", "decompose", "verified")
ADAPTATIONS = ("none", "periodic", "on_failure")
NAVIGATIONS = ("sequential", "parallel")
AXES = {
    "topology": TOPOLOGIES,
    "initialization": INITIALIZATIONS,
    "adaptation": ADAPTATIONS,
    "navigation": NAVIGATIONS,
}


@dataclass(frozen=True)
class PlannerConfig:
    """One planning system of the design space (validated: an unknown value names the axis and the choices)."""

    topology: str = "linear"
    initialization: str = "decompose"
    adaptation: str = "periodic"
    navigation: str = "sequential"

    def __post_init__(self) -> None:
        for axis, choices in AXES.items():
            check_choice(axis, getattr(self, axis), choices)

    @property
    def tokens(self) -> tuple[str, ...]:
        """The configuration as the meta-planner's token sequence (one token per axis, in ``AXES`` order)."""
        return tuple(getattr(self, axis) for axis in AXES)

    @property
    def indices(self) -> tuple[int, ...]:
        return tuple(AXES[axis].index(getattr(self, axis)) for axis in AXES)

    @classmethod
    def from_indices(cls, indices: tuple[int, ...]) -> PlannerConfig:
        return cls(*(choices[i] for choices, i in zip(AXES.values(), indices, strict=True)))

    def render(self) -> str:
        """The text form the LLM meta-planner emits (one ``axis: value`` line per axis)."""
        return "\n".join(f"{axis}: {getattr(self, axis)}" for axis in AXES)


ALL_CONFIGS = tuple(PlannerConfig(*values) for values in itertools.product(*AXES.values()))  # 4 x 3 x 3 x 2 = 72

# The seven official planners (EvolveCore/FlashOAgents/planning/) as fixed points of the grid [INF: our reading
# of each planner's code and description]
FIXED_PLANNERS = {
    # parallel DAG of sub-tasks with a periodic progress summary
    "flash_searcher": PlannerConfig("dag", "decompose", "periodic", "parallel"),
    # a step-by-step plan revised at every summary
    "oagents": PlannerConfig("linear", "decompose", "periodic", "sequential"),
    # plan, then replan when a sub-task fails
    "owl": PlannerConfig("linear", "decompose", "on_failure", "sequential"),
    # a supervisor picks 1-4 parallel experts; adaptation is a no-op
    "co_sight": PlannerConfig("hierarchical", "direct", "none", "parallel"),
    # a knowledge-flow graph grown from the answer node and refined on failure
    "flowsearch": PlannerConfig("dag", "direct", "on_failure", "parallel"),
    # hierarchical decomposition with state management
    "agent_orchestra": PlannerConfig("hierarchical", "decompose", "periodic", "sequential"),
    # retrieval-augmented supervisor over plan-and-execute workers
    "joy_agent": PlannerConfig("tree", "verified", "periodic", "sequential"),
}

CONFIG_LINE = re.compile(
    r"^\s*[*\-]?\s*(topology|initialization|adaptation|navigation)\s*[:=]\s*([a-z_]+)", re.M | re.I
)


class ParseError(ValueError):
    """A meta-planner's text does not contain a configuration (the attempt is recorded as failed)."""


def parse_config(text: str) -> PlannerConfig:
    """The ``PlannerConfig`` in a meta-planner's reply: ``axis: value`` lines, the first occurrence of each axis.

    Raises ``ParseError`` naming what is missing or unknown; the caller records the generation as failed,
    as the official collector skips a generation without its ``<<<PYTHON>>>`` and ``<<<YAML>>>`` blocks.
    """
    if not isinstance(text, str):
        raise ParseError(f"text={text!r:.80}: expected the meta-planner's reply as a str")
    found: dict[str, str] = {}
    for axis, value in CONFIG_LINE.findall(text):
        found.setdefault(axis.lower(), value.lower())
    missing = [axis for axis in AXES if axis not in found]
    if missing:
        raise ParseError(f"text={text[:80]!r}: expected one 'axis: value' line per axis; missing {missing}")
    for axis, value in found.items():
        if value not in AXES[axis]:
            raise ParseError(f"{axis}={value!r}: expected one of {list(AXES[axis])}")
    return PlannerConfig(**found)
