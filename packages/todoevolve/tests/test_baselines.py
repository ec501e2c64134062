import numpy as np
import pytest
from icml26_todoevolve.baselines import fixed_planner, oracle, random_configs, react
from icml26_todoevolve.factory import ALL_CONFIGS, FIXED_PLANNERS
from icml26_todoevolve.method import impedance, is_correct
from icml26_todoevolve.world import evaluate, make_tasks


def test_oracle_is_never_beaten_on_its_own_stream():
    tasks = make_tasks(6, np.random.default_rng(0))
    best = evaluate(tasks, oracle(tasks, seed=3), seed=3)
    for config in ALL_CONFIGS[::5]:
        other = evaluate(tasks, [config] * len(tasks), seed=3)
        for b, o in zip(best, other, strict=True):
            assert (is_correct(b), -impedance(b)) >= (is_correct(o), -impedance(o))


def test_fixed_react_and_random():
    tasks = make_tasks(5, np.random.default_rng(0))
    assert fixed_planner("owl", tasks) == [FIXED_PLANNERS["owl"]] * 5
    assert react(tasks) == [None] * 5
    assert all(c in ALL_CONFIGS for c in random_configs(tasks, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="^name='gpt'"):
        fixed_planner("gpt", tasks)
