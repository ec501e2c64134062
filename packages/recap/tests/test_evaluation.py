"""Multi-attempt evaluation: success@k, recovery rate, the episode log written as it goes."""

import json

import numpy as np
import pytest
from icml26_recap import Episode, recovery_rate, run_episodes, success_at


def test_success_at_and_recovery_closed_form():
    episodes = [
        Episode("slider", ["a"], ["solved"], ["none"], True),
        Episode("slider", ["a", "b"], ["wrong", "solved"], ["none", "overshoot"], True),
        Episode("slider", ["a", "b", "c"], ["wrong", "wrong", "wrong"], ["none"] * 3, False),
        Episode("slider", ["a", "b"], ["invalid", "solved"], ["none"] * 2, True),
    ]
    assert [success_at(episodes, k) for k in (1, 2, 3)] == [0.25, 0.75, 0.75]
    assert recovery_rate(episodes) == pytest.approx(2 / 3)
    assert np.isnan(recovery_rate(episodes[:1]))
    with pytest.raises(ValueError, match="k="):
        success_at(episodes, 0)
    with pytest.raises(ValueError, match="episodes="):
        success_at([], 1)


class Cheater:
    """Reads the scripted action through the environments that run_episodes builds (same seeds)."""

    def __init__(self, kind, n, seed):
        from icml26_recap import CaptchaEnv

        self.envs = [CaptchaEnv(kind, seed * 100_003 + i, split="test") for i in range(n)]
        for env in self.envs:
            env.reset()

    def act(self, observations, contexts):
        live = [e for e in self.envs if not e.done]
        actions = [e.oracle()[0] for e in live]
        for e, a in zip(live, actions, strict=True):
            e.step(a)
        return actions, ["none"] * len(actions)


def test_run_episodes_with_a_perfect_policy_and_the_log(tmp_path):
    log = tmp_path / "log.jsonl"
    episodes = run_episodes(Cheater("order_click", 3, 7), "order_click", 3, seed=7, log_path=log)
    assert [e.solved for e in episodes] == [True] * 3 and success_at(episodes, 2) == 0 and success_at(episodes, 3) == 1
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["statuses"] for line in lines] == [["progress", "progress", "solved"]] * 3


def test_run_episodes_rejects_a_policy_that_answers_the_wrong_count():
    class Short:
        def act(self, observations, contexts):
            return [], []

    with pytest.raises(ValueError, match="policy.act="):
        run_episodes(Short(), "text", 2, seed=0)
    with pytest.raises(ValueError, match="episodes="):
        run_episodes(Short(), "text", 0, seed=0)
