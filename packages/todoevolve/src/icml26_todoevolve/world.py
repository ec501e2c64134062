"""A simulated tool-use world in which planning systems execute typed tasks (a generated stand-in [INF]).

The paper runs LLM agents on web benchmarks (GAIA, xBench-DS, WebWalkerQA, ...). Offline and in seconds we
simulate the part a planner controls: a task is a dependency graph of sub-goals, each answered by one tool call;
an executor issues calls as the planning system directs, tools cost tokens and fail at random (some tasks have
a broken tool that only replanning or a probe at initialisation gets around), and every result the executor
holds in its context raises the chance of a silent reasoning error. A trajectory records the official fields:
the judgement, ``failed_tool_calls``, ``plan_stability`` and planner / worker token counts (cost through the
official prices, ``method.usage``).

Task kinds: ``chain`` (multi-hop lookup), ``fanout`` (collect many independent facts, then aggregate),
``compare`` (parallel branches whose later hops need the criterion found in the other branches, then a
comparison), ``recovery`` (a chain in which one tool is broken). What each planning choice changes:

* context: ``linear`` topology or ``sequential`` navigation keeps every result (and every failure message) in one
  context; ``dag`` with ``parallel`` navigation passes each call only its upstream results; ``tree`` keeps its own
  branch plus one summary per finished branch; ``hierarchical`` gives each branch a sub-agent of its own and the
  manager one summary per branch. Isolated calls do not see results of other branches they are coupled to.
* steps: ``parallel`` navigation issues every ready sub-goal in one step (``hierarchical``: one per sub-agent).
* initialisation: ``direct`` plans cost few tokens but the executor may call a sub-goal whose inputs are not
  ready (a failed call); ``verified`` probes each tool once and routes around a broken one from the start.
* adaptation: ``periodic`` re-checks results every ``summary_interval`` steps (catches silent errors, switches
  a tool that failed twice); ``on_failure`` replans after a failed call (switches tools, sees no silent errors).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from icml26_shared import check_choice, check_int, derive

from .factory import PlannerConfig
from .method import usage

TASK_KINDS = ("chain", "fanout", "compare", "recovery")
TOOL_OUTPUT_TOKENS = {"search": 80, "crawl": 150, "compute": 40}
TOOL_FAILURE = {"search": 0.05, "crawl": 0.10, "compute": 0.02}
FALLBACK_TOKEN_FACTOR = 1.5  # a fallback tool (e.g. an archive instead of a live crawl) costs more per call
MAX_STEPS = 20  # official max_steps=40 with summary_interval=8; halved here with tasks of <= 13 sub-goals [INF]
SUMMARY_INTERVAL = 4

# executor and planner model of the simulation [INF]
EPS0, EPS1 = 0.005, 0.012  # silent-error probability of one call: EPS0 + EPS1 * (results in its context)
COUPLING_ERROR = 0.08  # extra error per coupled result (another branch's criterion) the call cannot see
FAILURE_CLUTTER = 0.5  # a failure message in a shared context counts as half a result
MISSTEP = 0.35  # without a decomposed plan: chance that a call targets a sub-goal whose inputs are not ready
DETECT = 0.5  # chance that a periodic summary spots one silently wrong result
FAILURES_TO_SWITCH = 2  # adaptation switches a sub-goal to the fallback tool after this many failed calls
PLANNER_PROMPT, WORKER_PROMPT = 400, 300  # system prompt tokens
RESULT_TOKENS, FAILURE_TOKENS, DIRECTIVE_TOKENS = 120, 60, 40
PLAN_NODE_TOKENS = 40  # planner output per written-out sub-goal
TOPOLOGY_TOKEN_FACTOR = {"linear": 1.0, "dag": 1.4, "tree": 1.3, "hierarchical": 1.2}  # edges, nesting, briefs
SUB_AGENT_BRIEF, SUB_AGENT_REPORT = 80, 150  # hierarchical: planner tokens per sub-agent (out, in)
DIRECT_PLAN_TOKENS, PROBE_TOKENS = 30, (50, 20)  # a one-line plan; one tool probe (in, out)
SUMMARY_OUTPUT, REPLAN_OUTPUT = 80, 60
HINT_RECALL, HINT_FALSE_ALARM = 0.8, 0.1  # the task text mentions an unreliable tool
N_FEATURES = 6


@dataclass(frozen=True)
class Task:
    """A task: sub-goals in topological order (the last one is the answer), their tools and dependencies.

    ``group[i]`` is the branch of sub-goal i (the answer node has group -1); ``coupled[i]`` are sub-goals of
    other branches whose results sub-goal i needs besides its parents; ``broken`` is a tool that always fails.
    ``features`` and ``text`` are what a meta-planner sees of it.
    """

    task_id: str
    kind: str
    parents: tuple[tuple[int, ...], ...]
    tools: tuple[str, ...]
    group: tuple[int, ...]
    coupled: tuple[tuple[int, ...], ...]
    broken: str | None
    hint: bool
    features: np.ndarray = field(compare=False, repr=False)
    text: str = field(compare=False, repr=False)

    @property
    def n(self) -> int:
        return len(self.parents)


def _ancestors(parents: tuple[tuple[int, ...], ...]) -> list[set[int]]:
    out: list[set[int]] = []
    for ps in parents:  # topological order: parents come first
        out.append(set(ps).union(*(out[p] for p in ps)) if ps else set())
    return out


def _levels(parents: tuple[tuple[int, ...], ...]) -> list[int]:
    level: list[int] = []
    for ps in parents:
        level.append(1 + max((level[p] for p in ps), default=-1))
    return level


def make_task(kind: str, rng: np.random.Generator, task_id: str = "t0") -> Task:
    """A random task of ``kind`` (one of ``TASK_KINDS``)."""
    check_choice("kind", kind, TASK_KINDS)
    parents: list[tuple[int, ...]] = []
    group: list[int] = []
    coupled: list[tuple[int, ...]] = []
    if kind in ("chain", "recovery"):
        hops = int(rng.integers(3, 6))
        for i in range(hops):
            parents.append((i - 1,) if i else ())
            group.append(0)
            coupled.append(())
    elif kind == "fanout":
        for i in range(int(rng.integers(8, 13))):
            parents.append(())
            group.append(i)
            coupled.append(())
    else:  # compare: 2-3 branches of 2-3 hops; hop j > 0 of a branch needs hop 0 of every other branch
        branches, hops = int(rng.integers(2, 4)), int(rng.integers(2, 4))
        for b in range(branches):
            for j in range(hops):
                parents.append((len(parents) - 1,) if j else ())
                group.append(b)
                coupled.append(tuple(o * hops for o in range(branches) if o != b) if j else ())
    leaves = [i for i in range(len(parents)) if all(i not in ps for ps in parents)]
    parents.append(tuple(leaves))  # the answer node combines every branch end
    group.append(-1)
    coupled.append(())
    tools = [str(rng.choice(("search", "crawl"))) for _ in parents[:-1]] + ["compute"]
    broken = str(rng.choice(sorted(set(tools[:-1])))) if kind == "recovery" else None
    hint = bool(rng.random() < (HINT_RECALL if broken else HINT_FALSE_ALARM))
    parents_t = tuple(parents)
    levels = _levels(parents_t)
    n = len(parents_t)
    width = max(levels.count(v) for v in set(levels))
    features = np.array(
        [n / 10, (max(levels) + 1) / n, width / n, tools.count("crawl") / n, float(hint), 1.0], dtype=np.float32
    )
    text = (
        f"Answer a question that needs {n - 1} tool lookups ({tools.count('search')} search, "
        f"{tools.count('crawl')} crawl) and one final computation. The longest chain of dependent lookups has "
        f"{max(levels)} steps; up to {width} lookups could run at the same time."
        + (" Later lookups must use criteria found in the other lines of inquiry." if any(coupled) else "")
        + (" Warning: one of the tools has been unreliable lately." if hint else "")
    )
    return Task(task_id, kind, parents_t, tuple(tools), tuple(group), tuple(coupled), broken, hint, features, text)


def make_tasks(n: int, rng: np.random.Generator, kinds: tuple[str, ...] = TASK_KINDS, prefix: str = "t") -> list[Task]:
    """``n`` tasks, kinds drawn uniformly from ``kinds``."""
    check_int("n", n, 1)
    if not kinds:
        raise ValueError(f"kinds={kinds!r}: expected at least one of {list(TASK_KINDS)}")
    for k in kinds:
        check_choice("kinds", k, TASK_KINDS)
    return [make_task(str(rng.choice(kinds)), rng, f"{prefix}{i}") for i in range(n)]


@dataclass
class Trajectory:
    """What one execution recorded, in the official collector's terms."""

    judgement: str  # "correct" / "incorrect", as the official judge writes it
    failed_tool_calls: int
    plan_stability: float
    planner_input_tokens: int
    planner_output_tokens: int
    worker_input_tokens: int
    worker_output_tokens: int
    steps: int

    @property
    def correct(self) -> bool:
        return self.judgement == "correct"

    def record(self, task: Task, output: str) -> dict:
        """One JSONL line as the official ``collect_train_data.py`` writes it (the fields IGPO reads)."""
        return {
            "instance_id": task.task_id,
            "task_kind": task.kind,
            "plan_model_input": task.text,
            "plan_model_output": output,
            "judgement": self.judgement,
            "metrics": {"failed_tool_calls": self.failed_tool_calls, "plan_stability": self.plan_stability},
            **usage(
                self.planner_input_tokens,
                self.planner_output_tokens,
                self.worker_input_tokens,
                self.worker_output_tokens,
                steps=self.steps,
            ),
        }


def execute(
    task: Task,
    config: PlannerConfig | None,
    rng: np.random.Generator,
    max_steps: int = MAX_STEPS,
    summary_interval: int = SUMMARY_INTERVAL,
) -> Trajectory:
    """Run ``task`` under the planning system ``config`` (None: a ReAct executor without any planner)."""
    check_int("max_steps", max_steps, 1)
    check_int("summary_interval", summary_interval, 1)
    if config is not None and not isinstance(config, PlannerConfig):
        raise ValueError(f"config={config!r:.80}: expected a PlannerConfig or None (no planning)")
    n = task.n
    ancestors = _ancestors(task.parents)
    tools = list(task.tools)
    done, wrong = [False] * n, [False] * n
    fails = [0] * n
    n_failed, revisions, failure_messages = 0, 0, 0
    p_in = p_out = w_in = w_out = 0
    topology = config.topology if config else "linear"
    structured = config is not None and config.initialization != "direct"
    groups = sorted({g for g in task.group if g >= 0})

    # topology + initialisation: the initial plan
    if config is not None:
        p_in += PLANNER_PROMPT + 30 + 10 * n
        if structured:
            plan_tokens = int(PLAN_NODE_TOKENS * n * TOPOLOGY_TOKEN_FACTOR[topology])
        else:
            plan_tokens = DIRECT_PLAN_TOKENS
        if topology == "hierarchical":
            plan_tokens += SUB_AGENT_BRIEF * len(groups)
        p_out += plan_tokens
        if config.initialization == "verified":
            for tool in sorted(set(tools)):
                p_in, p_out = p_in + PROBE_TOKENS[0], p_out + PROBE_TOKENS[1]
                if tool == task.broken:  # the probe fails: plan the fallback from the start (initial plan)
                    tools = [t + "_fallback" if t == tool else t for t in tools]
    else:
        plan_tokens = 0

    shared_context = config is None or topology == "linear" or config.navigation == "sequential"
    shared_context = shared_context or not structured

    def finished_group(g: int) -> bool:
        return all(done[j] for j in range(n) if task.group[j] == g)

    def context(i: int) -> tuple[float, int]:
        """(results in the context of the call for sub-goal i, coupled results it cannot see)."""
        if shared_context:
            return sum(done) + FAILURE_CLUTTER * failure_messages, 0
        if topology == "dag":
            visible = {j for j in ancestors[i] if done[j]}
            items = float(len(visible))
        elif topology == "tree":
            own = {j for j in range(n) if done[j] and task.group[j] == task.group[i] and task.group[i] >= 0}
            others = [g for g in groups if g != task.group[i] and finished_group(g)]
            visible = own | {j for j in range(n) if done[j] and task.group[j] in others}
            items = len(own) + len(others) + (len(task.parents[i]) if task.group[i] < 0 else 0)
        else:  # hierarchical: a sub-agent per branch; the manager answers from one report per branch
            visible = {j for j in range(n) if done[j] and task.group[j] == task.group[i]}
            items = float(len(visible) if task.group[i] >= 0 else len(groups))
            if task.group[i] < 0:
                visible = set(range(n))
        unseen = sum(1 for j in task.coupled[i] if j not in visible)
        return items, unseen

    def ready(i: int) -> bool:
        return not done[i] and all(done[p] for p in task.parents[i])

    steps = 0
    while steps < max_steps and not done[n - 1]:
        steps += 1
        pending = [i for i in range(n) if not done[i]]
        if not structured:  # no written plan: the executor picks a sub-goal itself, sometimes too early
            unready = [i for i in pending if not ready(i)]
            if unready and rng.random() < MISSTEP:
                calls = [int(rng.choice(unready))]
            else:
                calls = [next(i for i in pending if ready(i))]
        elif config.navigation == "parallel" and topology == "hierarchical":
            calls = [
                next(i for i in pending if ready(i) and task.group[i] == g)
                for g in [*groups, -1]
                if any(ready(i) and task.group[i] == g for i in pending)
            ]
        elif config.navigation == "parallel" and topology != "linear":
            calls = [i for i in pending if ready(i)]
        else:
            calls = [next(i for i in pending if ready(i))]
        step_failures = []
        outcomes = []
        for i in calls:
            items, unseen = context(i)
            shown_plan = plan_tokens if config is None or config.navigation == "sequential" else DIRECTIVE_TOKENS
            tool = tools[i]
            base = tool.removesuffix("_fallback")
            w_in += WORKER_PROMPT + shown_plan + int(items * RESULT_TOKENS)
            w_out += int(TOOL_OUTPUT_TOKENS[base] * (FALLBACK_TOKEN_FACTOR if tool != base else 1.0))
            if not ready(i) or tool == task.broken or rng.random() < TOOL_FAILURE[base]:
                step_failures.append(i)
                continue
            eps = EPS0 + EPS1 * items + COUPLING_ERROR * unseen
            outcomes.append((i, bool(rng.random() < eps)))
        for i, error in outcomes:  # results of a parallel step land together
            done[i], wrong[i] = True, error or any(wrong[p] for p in task.parents[i])
        for i in step_failures:
            fails[i] += 1
        n_failed += len(step_failures)
        failure_messages += len(step_failures)
        if config is None or config.adaptation == "none":
            continue
        trajectory_in = PLANNER_PROMPT + int((sum(done) + failure_messages) * RESULT_TOKENS)
        if config.adaptation == "periodic" and steps % summary_interval == 0:
            p_in, p_out = p_in + trajectory_in, p_out + SUMMARY_OUTPUT
            for i in range(n):
                if done[i] and wrong[i] and rng.random() < DETECT:  # re-open the bad result and what used it
                    for j in [i, *(j for j in range(n) if i in ancestors[j])]:
                        if done[j]:
                            done[j], wrong[j] = False, False
                            revisions += 1
        elif config.adaptation == "on_failure" and step_failures:
            p_in, p_out = p_in + trajectory_in, p_out + REPLAN_OUTPUT
        else:
            continue
        for i in range(n):  # both adaptations switch a sub-goal whose tool keeps failing
            if not done[i] and fails[i] >= FAILURES_TO_SWITCH and not tools[i].endswith("_fallback"):
                tools[i] = tools[i] + "_fallback"
                revisions += 1
    if topology == "hierarchical" and config is not None:
        p_in += SUB_AGENT_REPORT * len(groups)  # the manager reads one report per sub-agent
    correct = done[n - 1] and not any(wrong)
    return Trajectory(
        judgement="correct" if correct else "incorrect",
        failed_tool_calls=n_failed,
        plan_stability=n / (n + revisions),  # [INF] 1 when the plan never changed; each node revision lowers it
        planner_input_tokens=p_in,
        planner_output_tokens=p_out,
        worker_input_tokens=w_in,
        worker_output_tokens=w_out,
        steps=steps,
    )


def evaluate(
    tasks: list[Task],
    configs: list[PlannerConfig | None],
    seed: int,
    max_steps: int = MAX_STEPS,
    summary_interval: int = SUMMARY_INTERVAL,
) -> list[dict]:
    """Execute task i under configs[i] with the random stream ``derive(seed, "execute", task_id)``: every method
    sees the same tool failures and draws on the same task (common random numbers), so differences are paired."""
    if len(tasks) != len(configs):
        raise ValueError(f"tasks, configs: expected the same length, got {len(tasks)} and {len(configs)}")
    records = []
    for task, config in zip(tasks, configs, strict=True):
        rng = np.random.default_rng(derive(seed, "execute", task.task_id))
        trajectory = execute(task, config, rng, max_steps, summary_interval)
        records.append(trajectory.record(task, config.render() if config is not None else ""))
    return records
