"""The sandbox: every task solvable by its scripted solver, feedback semantics, bad inputs."""

import numpy as np
import pytest
from icml26_recap import CAPTCHA_TYPES, GENERAL_TASKS, MULTI_STEP_TYPES, TASKS, Action, CaptchaEnv
from icml26_recap.tasks import ERRORS, RotationTask


def test_seven_captcha_types_and_three_general_tasks():
    assert len(CAPTCHA_TYPES) == 7 and len(GENERAL_TASKS) == 3
    assert set(MULTI_STEP_TYPES) == {"slider", "rotation", "order_click", "drag_match"}


@pytest.mark.parametrize("kind", list(TASKS))
@pytest.mark.parametrize("size", [64, 128])
def test_scripted_solver_solves_every_instance(kind, size):
    env = CaptchaEnv(kind, seed=3, size=size, t_max=5, split="test")
    for _ in range(8):
        obs = env.reset()
        assert obs.image.shape == (size, size, 3) and obs.image.dtype == np.uint8
        while not env.done:
            env.step(env.oracle()[0])
        assert env.solved
        assert env.steps == (3 if kind == "order_click" else 1)


@pytest.mark.parametrize("kind", list(TASKS))
def test_mistakes_are_wrong_with_a_named_error(kind):
    env, rng = CaptchaEnv(kind, seed=5), np.random.default_rng(0)
    for _ in range(6):
        env.reset()
        step = env.step(env.mistake(rng))
        assert step.status == "wrong" and step.error in ERRORS[1:]


def test_same_seed_same_screens_and_fresh_instances_per_episode():
    a, b = CaptchaEnv("text", seed=9), CaptchaEnv("text", seed=9)
    first = a.reset().image
    assert np.array_equal(first, b.reset().image)
    assert not np.array_equal(first, a.reset().image)


def test_slider_keeps_a_wrong_drop_on_screen_and_text_refreshes():
    env = CaptchaEnv("slider", seed=1)
    env.reset()
    gap, y, piece = env.state["gap"], env.state["y"], env.state["piece"]
    step = env.step(Action("drag", piece, y, gap + 10, y))
    assert (step.status, step.error, env.state["piece"]) == ("wrong", "overshoot", gap + 10)
    assert not np.array_equal(step.observation.image, step.next_observation.image)
    assert step.next_observation.status == "wrong" and tuple(step.next_observation.image[0, 0]) == (220, 30, 30)
    env = CaptchaEnv("text", seed=1)
    env.reset()
    answer, before = env.state["answer"], env.state["noise_seed"]
    wrong = str((int(answer) + 1) % 1000).zfill(3)
    assert env.step(Action("type", text=wrong)).error == "misread"
    assert env.state["noise_seed"] != before  # a fresh challenge


def _drag_error(kind: str, state: dict, start: int, end: int, y: int) -> str:
    env = CaptchaEnv(kind, seed=0)
    env.reset()
    env.state = {**env.state, **state}
    return env.step(Action("drag", start, y, end, y)).error


@pytest.mark.parametrize(
    ("theta0", "knob", "end", "error"),
    [
        (30, 32, 36, "wrong_direction"),  # +30 -> +60 deg: away from upright (a sign rule: undershoot)
        (30, 32, 24, "overshoot"),  # +30 -> -30: past upright
        (90, 32, 28, "undershoot"),  # +90 -> +60: towards upright, short of it
        (90, 32, 32, "undershoot"),  # no move
        (60, 52, 32, "undershoot"),  # -150 -> -300 (= +60) the long way round, not past upright (a sign rule: over)
        (180, 32, 40, "undershoot"),  # upside down: +180 -> +240 (= -120) is towards upright too
        (-90, 32, 8, "wrong_direction"),  # -90 -> -270 (= +90): no nearer upright, never past it
    ],
)
def test_rotation_mistakes_are_named_by_where_the_arrow_went(theta0, knob, end, error):
    assert _drag_error("rotation", {"theta0": theta0, "knob": knob}, knob, end, RotationTask.knob_y) == error


def test_slider_drag_away_from_the_gap_is_wrong_direction_not_undershoot():
    state = {"gap": 40, "piece": 30, "y": 32}
    assert _drag_error("slider", state, 30, 20, 32) == "wrong_direction"
    assert _drag_error("slider", state, 30, 34, 32) == "undershoot"
    assert _drag_error("slider", state, 30, 50, 32) == "overshoot"
    state = {"knob": TASKS["drag_slider"].x_of(4), "value": 6}
    y = TASKS["drag_slider"].y
    assert _drag_error("drag_slider", state, state["knob"], state["knob"] - 6, y) == "wrong_direction"


def test_rotation_angle_wraps_and_the_knob_moves_it():
    state = {"theta0": 150, "knob": 32}
    assert RotationTask.angle(state) == 150
    assert RotationTask.angle({**state, "knob": 36}) == 180  # 150 + 4 px * 7.5 deg
    assert RotationTask.angle({**state, "knob": 37}) == -172.5  # past 180 it wraps
    assert RotationTask.angle({"theta0": -90, "knob": 44}) == 0


def test_wrong_action_kind_is_an_invalid_attempt_that_counts():
    env = CaptchaEnv("slider", seed=0, t_max=2)
    env.reset()
    step = env.step(Action("type", text="12"))
    assert (step.status, step.error, env.steps, env.done) == ("invalid", "wrong_action", 1, False)
    step = env.step(None)  # an answer that did not parse
    assert (step.status, env.steps, env.done, env.solved) == ("invalid", 2, True, False)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(env.oracle()[0])


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="reset"):
        CaptchaEnv("text").step(Action("type", text="1"))


@pytest.mark.parametrize("action", [Action("click", 64, 3), Action("click", -1, 3), Action("drag", 3, 3, 3, 70)])
def test_actions_outside_the_screen_are_refused(action):
    env = CaptchaEnv("order_click")
    env.reset()
    with pytest.raises(ValueError, match="action="):
        env.step(action)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"kind": "recaptcha"}, "kind"),
        ({"kind": "text", "size": 32}, "size"),
        ({"kind": "text", "size": 96}, "size"),
        ({"kind": "text", "t_max": 0}, "t_max"),
        ({"kind": "text", "split": "val"}, "split"),
        ({"kind": "text", "seed": -1}, "seed"),
        ({"kind": "text", "screens": []}, "screens"),
    ],
)
def test_env_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        CaptchaEnv(**kwargs)
