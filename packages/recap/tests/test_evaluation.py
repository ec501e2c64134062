"""Multi-attempt evaluation: success@k, recovery rate, the episode log written as it goes."""

import json

import numpy as np
import pytest
from icml26_recap import AgentPolicy, Episode, ReCAPAgent, recovery_rate, run_episodes, success_at


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


class Recorder:
    """A policy that keeps a copy of every screenshot it is shown."""

    def __init__(self, policy):
        self.policy, self.images = policy, []

    def act(self, observations, contexts):
        self.images += [o.image.copy() for o in observations]
        return self.policy.act(observations, contexts)


@pytest.mark.parametrize("kind", ["slider", "text"])  # a wrong attempt stays on screen / loads a fresh challenge
def test_a_shared_screenshot_memo_renders_each_state_once_and_changes_nothing(kind, monkeypatch):
    """The experiment evaluates every agent on the same challenges with one memo of screenshots (0.1.3): the same
    episodes and screenshots as drawing every step, with each distinct state drawn once."""
    import icml26_recap.env as env_module

    drawn = []
    render = env_module.render
    monkeypatch.setattr(env_module, "render", lambda task, state: drawn.append(1) or render(task, state))
    agents = [AgentPolicy(ReCAPAgent(64, 8, 16, dtype="float64", seed=s)) for s in (0, 1)]

    def evaluate(screens):
        episodes, images = [], []
        for agent in agents:
            recorder = Recorder(agent)
            episodes += run_episodes(recorder, kind, 6, seed=3, t_max=4, screens=screens)
            images += recorder.images
        return episodes, images

    episodes, images = evaluate(None)
    every_step = len(drawn)
    drawn.clear()
    screens = {}
    shared, shared_images = evaluate(screens)
    assert shared == episodes and len(shared_images) == len(images)
    assert all(np.array_equal(a, b) for a, b in zip(shared_images, images, strict=True))
    assert len(drawn) == len(screens) < every_step  # the second agent's first screenshots at least are shared
