"""Simulated editors: exact limits, the ground-truth rubric, and bad latents."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_dlebench.data import SMALL_AREA, make_item
from icml26_dlebench.editors import EDITORS, Edit, apply_edit, ground_truth


@pytest.fixture(scope="module")
def item():
    return make_item("color", 64, SMALL_AREA, np.random.default_rng(1))


def test_full_clean_edit_is_the_reference_and_scores_5_5(item):
    edit = Edit("correct", 1.0, 0.0, 0.0, 0.0)
    np.testing.assert_allclose(apply_edit(item, edit, np.random.default_rng(0)), item.reference, atol=1e-12)
    assert ground_truth(edit) == (5, 5)


def test_no_edit_is_the_source_and_follows_nothing(item):
    edit = Edit("correct", 0.0, 0.0, 0.0, 0.0)
    np.testing.assert_allclose(apply_edit(item, edit, np.random.default_rng(0)), item.source, atol=1e-12)
    assert ground_truth(edit) == (1, 5)


def test_wrong_object_changes_something_outside_the_target_region(item):
    edited = apply_edit(item, Edit("wrong_object", 1.0, 0.0, 0.0, 0.0), np.random.default_rng(0))
    assert np.abs(edited - item.source)[~item.region].max() > 0.1
    assert np.abs(edited - item.source)[item.region].max() == 0
    assert ground_truth(Edit("wrong_object", 1.0, 0.0, 0.0, 0.0)) == (2, 3)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 3), st.floats(0, 3), st.floats(0, 0.1))
def test_ground_truth_is_monotone_in_each_error(s1, s2, blur1, blur2, noise):
    lo, hi = sorted((s1, s2))
    assert (
        ground_truth(Edit("correct", lo, 0.0, 0.0, noise))[0] <= ground_truth(Edit("correct", hi, 0.0, 0.0, noise))[0]
    )
    b1, b2 = sorted((blur1, blur2))
    assert (
        ground_truth(Edit("correct", 1.0, 0.0, b2, noise))[1] <= ground_truth(Edit("correct", 1.0, 0.0, b1, noise))[1]
    )


def test_every_editor_samples_valid_latents_and_precise_ranks_first():
    rng = np.random.default_rng(0)
    means = {e.name: np.mean([sum(ground_truth(e.sample(rng))) for _ in range(200)]) for e in EDITORS}
    assert max(means, key=means.get) == "precise" and min(means, key=means.get) == "timid"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"mode": "swap"}, "mode="),
        ({"strength": 1.5}, "strength="),
        ({"blur": -1.0}, "blur="),
        ({"noise": 11.0}, "noise="),
    ],
)
def test_edit_rejects_bad_latents(kwargs, name):
    values = {"mode": "correct", "strength": 1.0, "offset": 0.0, "blur": 0.0, "noise": 0.0, **kwargs}
    with pytest.raises(ValueError, match=name):
        Edit(**values)
    with pytest.raises(ValueError, match="edit="):
        ground_truth((5, 5))
