"""The data engine: trajectories with reasoning traces, curation, self-correction samples, mixtures."""

import logging

import numpy as np
import pytest
from icml26_recap import collect, curate, encode_context, mixture, self_correction_samples, sft_samples
from icml26_recap.data import CONTEXT_DIM


def test_scripted_trajectories_are_solved_with_a_thought_per_step():
    trajectories = collect("order_click", 5, seed=0)
    assert all(t.solved and len(t.steps) == 3 for t in trajectories)
    samples = sft_samples(trajectories)
    assert len(samples) == 15 and all(s.thought and s.reflection == "none" for s in samples)
    # the second click's context: the previous click and its 'progress' status
    assert samples[1].context[1] == 1 and samples[1].context[10] == 1 and samples[0].context[0] == 1


def test_curate_keeps_solved_unique_trajectories_and_caps_types():
    weak = collect("slider", 20, seed=1, mistake_rate=1.0, t_max=1)
    assert not any(t.solved for t in weak) and curate(weak) == []
    good = collect("drag_slider", 200, seed=1)  # 72 distinct (start, value) layouts
    kept = curate(good)
    assert len(kept) <= 72 and len(curate(good + good)) == len(kept)
    assert len(curate(good, per_type=10)) == 10


def test_self_correction_samples_target_the_oracle_after_the_mistake():
    trajectories = collect("slider", 30, seed=2, mistake_rate=0.5)
    samples = self_correction_samples(trajectories)
    assert samples
    for s in samples:
        assert s.reflection in {"overshoot", "undershoot", "wrong_direction", "missed_target"}
        assert s.context[9] == 1  # the previous status was 'wrong'
        assert s.action.kind == "drag" and s.thought.startswith("Reflection:")
    # the target is the scripted action for the screenshot after the mistake, never the mistake itself
    for t in trajectories:
        k = next((i for i, st in enumerate(t.steps) if st.status == "wrong"), None)
        if k is not None and k + 1 < len(t.steps):
            assert t.oracle[k + 1][0] != t.steps[k].action


def test_successful_only_data_give_no_self_correction_samples(caplog):
    with caplog.at_level(logging.WARNING, logger="recap"):
        assert self_correction_samples(collect("text", 5, seed=0)) == []
    assert "none of 5 trajectories" in caplog.text


def test_mixture_follows_the_ratio():
    captcha, corrections, general = (
        sft_samples(collect(k, n, 0)) for k, n in (("slider", 20), ("rotation", 20), ("type_field", 30))
    )
    mixed = mixture(captcha, corrections, general, (1, 0.5, 1), np.random.default_rng(0))
    kinds = [s.kind for s in mixed]
    assert (kinds.count("slider"), kinds.count("rotation"), kinds.count("type_field")) == (20, 10, 20)


def test_encode_context_shape_and_bad_status():
    assert encode_context(None, "none", 0, 64, 5).shape == (CONTEXT_DIM,)
    with pytest.raises(ValueError, match="status="):
        encode_context(None, "solved", 1, 64, 5)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: collect("text", 0, 0), "episodes"),
        (lambda: collect("text", 2, 0, mistake_rate=1.5), "mistake_rate"),
        (lambda: collect("captcha", 2, 0), "kind"),
        (lambda: curate([], per_type=0), "per_type"),
        (lambda: mixture([], [], [], (0, 1, 1), np.random.default_rng(0)), "ratio"),
    ],
)
def test_data_engine_rejects_bad_arguments(call, name):
    with pytest.raises(ValueError, match=f"{name}="):
        call()
