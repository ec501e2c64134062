"""What the paper compares a learned meta-planner against, as choices of a planning system per task.

* the seven hand-engineered planners of PlanFactory, each a fixed configuration (``FIXED_PLANNERS``);
* a ReAct executor without any planning system (``None``);
* a random configuration per task;
* the oracle: the configuration that, on this very task and random stream, succeeds at the lowest impedance
  (an upper bound no planner can reach without seeing the outcome).
The SFT-only meta-planner and correctness-only DPO are ablations of the pipeline (``experiment.py``).
"""

from __future__ import annotations

import numpy as np

from .factory import ALL_CONFIGS, FIXED_PLANNERS, PlannerConfig
from .method import impedance, is_correct
from .world import MAX_STEPS, SUMMARY_INTERVAL, Task, evaluate


def fixed_planner(name: str, tasks: list[Task]) -> list[PlannerConfig]:
    """The named official planner (a key of ``FIXED_PLANNERS``) for every task."""
    if name not in FIXED_PLANNERS:
        raise ValueError(f"name={name!r}: expected one of {sorted(FIXED_PLANNERS)}")
    return [FIXED_PLANNERS[name]] * len(tasks)


def react(tasks: list[Task]) -> list[None]:
    """No planning system: the executor acts step by step on the task alone."""
    return [None] * len(tasks)


def random_configs(tasks: list[Task], rng: np.random.Generator) -> list[PlannerConfig]:
    """A configuration drawn uniformly from the 72 of the design space, per task."""
    return [ALL_CONFIGS[int(i)] for i in rng.integers(0, len(ALL_CONFIGS), size=len(tasks))]


def oracle(
    tasks: list[Task], seed: int, max_steps: int = MAX_STEPS, summary_interval: int = SUMMARY_INTERVAL
) -> list[PlannerConfig]:
    """Per task, the configuration that succeeds with the lowest impedance on the evaluation stream of ``seed``
    (the lowest-impedance one when none succeeds): every configuration is executed on every task."""
    best = []
    for task in tasks:
        records = evaluate([task] * len(ALL_CONFIGS), list(ALL_CONFIGS), seed, max_steps, summary_interval)
        scores = [(not is_correct(r), impedance(r)) for r in records]
        best.append(ALL_CONFIGS[min(range(len(scores)), key=scores.__getitem__)])
    return best
