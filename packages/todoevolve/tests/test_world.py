import numpy as np
import pytest
from icml26_todoevolve.factory import ALL_CONFIGS, PlannerConfig
from icml26_todoevolve.method import impedance
from icml26_todoevolve.world import TASK_KINDS, evaluate, execute, make_task, make_tasks


@pytest.mark.parametrize("kind", TASK_KINDS)
def test_task_structure(kind):
    for seed in range(10):
        task = make_task(kind, np.random.default_rng(seed))
        assert all(p < i for i, ps in enumerate(task.parents) for p in ps)  # topological order
        used = {p for ps in task.parents[:-1] for p in ps}
        assert set(task.parents[-1]) == set(range(task.n - 1)) - used  # the answer combines every branch end
        assert task.tools[-1] == "compute" and task.group[-1] == -1
        assert (task.broken is not None) == (kind == "recovery")
        assert task.features.shape == (6,) and np.isfinite(task.features).all()


def test_bad_task_arguments():
    with pytest.raises(ValueError, match="^kind='maze'"):
        make_task("maze", np.random.default_rng(0))
    with pytest.raises(ValueError, match="^n=0"):
        make_tasks(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^kinds='maze'"):
        make_tasks(2, np.random.default_rng(0), kinds=("maze",))


@pytest.mark.parametrize("config", [*ALL_CONFIGS[::7], None])
def test_trajectory_invariants(config):
    for seed in range(8):
        rng = np.random.default_rng(seed)
        task = make_task(TASK_KINDS[seed % 4], rng)
        t = execute(task, config, rng)
        assert 1 <= t.steps <= 20 and t.failed_tool_calls >= 0 and 0 < t.plan_stability <= 1
        assert min(t.planner_input_tokens, t.planner_output_tokens, t.worker_input_tokens) >= 0
        if config is None:  # ReAct: no planning system, no planner tokens
            assert t.planner_input_tokens == t.planner_output_tokens == 0
        if config is not None and config.navigation == "sequential" and t.correct:
            assert t.steps >= task.n  # one sub-goal per step
        record = t.record(task, "x")
        assert record["judgement"] in ("correct", "incorrect") and impedance(record) > 0


def test_same_stream_same_trajectory():
    task = make_task("compare", np.random.default_rng(3))
    a = execute(task, ALL_CONFIGS[5], np.random.default_rng(9))
    b = execute(task, ALL_CONFIGS[5], np.random.default_rng(9))
    assert a == b
    assert evaluate([task], [ALL_CONFIGS[5]], 4) == evaluate([task], [ALL_CONFIGS[5]], 4)


def test_broken_tool_without_adaptation_or_probe_always_fails():
    tasks = make_tasks(20, np.random.default_rng(0), kinds=("recovery",))
    blind = PlannerConfig("linear", "decompose", "none", "sequential")
    assert all(r["judgement"] == "incorrect" for r in evaluate(tasks, [blind] * 20, 0))
    for fix in (PlannerConfig("linear", "verified", "none", "sequential"), PlannerConfig("linear", "decompose")):
        assert np.mean([r["judgement"] == "correct" for r in evaluate(tasks, [fix] * 20, 0)]) > 0.5


def test_parallel_navigation_takes_fewer_steps_on_fanout():
    tasks = make_tasks(20, np.random.default_rng(1), kinds=("fanout",))
    parallel = evaluate(tasks, [PlannerConfig("dag", "decompose", "none", "parallel")] * 20, 0)
    linear = evaluate(tasks, [PlannerConfig("linear", "decompose", "none", "sequential")] * 20, 0)
    assert max(r["usage"]["step_count"] for r in parallel) < min(r["usage"]["step_count"] for r in linear)


def test_bad_execution_arguments():
    task = make_task("chain", np.random.default_rng(0))
    with pytest.raises(ValueError, match="^max_steps=0"):
        execute(task, None, np.random.default_rng(0), max_steps=0)
    with pytest.raises(ValueError, match="^summary_interval=0"):
        execute(task, None, np.random.default_rng(0), summary_interval=0)
    with pytest.raises(ValueError, match="^config='dag'"):
        execute(task, "dag", np.random.default_rng(0))
    with pytest.raises(ValueError, match="same length"):
        evaluate([task], [], 0)
