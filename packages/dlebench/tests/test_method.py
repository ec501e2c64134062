"""The evaluation protocol: rubric levels, the zoom tool, the metric judge's closed forms, agreement."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_dlebench.data import SMALL_AREA, make_item
from icml26_dlebench.editors import Edit, apply_edit
from icml26_dlebench.imaging import check_image, zoom
from icml26_dlebench.method import MODES, MetricJudge, Scores, agreement, bounding_box, level
from scipy.stats import spearmanr


@pytest.fixture(scope="module")
def item():
    return make_item("color", 128, (0.015, 0.02), np.random.default_rng(4))


def test_levels_are_equal_bins_of_the_evidence():
    assert [level(q) for q in (-3.0, 0.0, 0.19, 0.2, 0.5, 0.79, 0.8, 1.0, 7.0)] == [1, 1, 1, 2, 3, 4, 5, 5, 5]


def test_bounding_box_is_a_square_around_the_mask_inside_the_image():
    mask = np.zeros((100, 100), bool)
    mask[2:12, 90:98] = True
    y0, x0, y1, x1 = bounding_box(mask, margin=0.25, min_side=16)
    assert y1 - y0 == x1 - x0 == 15 + 1  # ceil(10 * 1.5) = 15 < min_side 16
    assert 0 <= y0 <= 2 and 12 <= y1 <= 100 and x0 <= 90 and 98 <= x1 <= 100
    assert bounding_box(np.ones((20, 20), bool)) == (0, 0, 20, 20)


def test_zoom_of_the_whole_image_at_its_size_is_the_identity(item):
    np.testing.assert_allclose(zoom(item.source, None, 128), item.source, atol=1e-12)
    assert zoom(item.region, bounding_box(item.region), 32).shape == (32, 32)


def test_judge_gives_the_reference_full_marks_and_the_source_no_instruction_following(item):
    judge = MetricJudge()
    on_reference = judge.score_modes(item, item.reference)
    on_source = judge.score_modes(item, item.source)
    assert on_reference["oracle"] == on_reference["tool"] == Scores(5, 5)
    for mode in MODES:
        assert on_source[mode] == Scores(1, 5)
        assert judge.score(item, item.source, mode) == on_source[mode]


@given(st.floats(0, 1))
def test_oracle_evidence_is_the_fraction_of_the_change_applied(strength):
    item = make_item("color", 64, SMALL_AREA, np.random.default_rng(7))
    edited = apply_edit(item, Edit("correct", strength, 0.0, 0.0, 0.0), np.random.default_rng(0))
    q_if, q_vc = MetricJudge(view_size=16).evidence(item, edited)["oracle"]
    assert q_if == pytest.approx(strength, abs=1e-9)  # zoom is linear: |E - X| = (1 - s) |S - X|
    assert q_vc == pytest.approx(1.0, abs=1e-9)


def test_zooming_sees_a_small_edit_the_whole_view_dilutes(item):
    edited = apply_edit(item, Edit("correct", 1.0, 0.0, 0.0, 0.0), np.random.default_rng(0))
    judge = MetricJudge(view_size=32, area_scale=0.5)
    evidence = judge.evidence(item, edited)
    assert evidence["tool"][0] > 0.9 and evidence["whole"][0] < 0.3
    # the whole view's mean change is the region's change diluted by its area (resizing keeps the mean)
    region_change = np.abs(edited - item.source).mean(-1)[item.region].mean()
    whole_change = -judge.kappa * judge.area_scale * np.log(1 - evidence["whole"][0])
    assert whole_change == pytest.approx(region_change * item.region.mean(), rel=0.05)


def test_agreement_is_scipys_spearman_and_handles_ties():
    rng = np.random.default_rng(0)
    a, b = rng.integers(1, 6, 50), rng.integers(1, 6, 50)
    assert agreement(a, b) == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    assert agreement(b, b) == pytest.approx(1.0)
    assert agreement(np.full(50, 3), b) == 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda it: agreement([1, 2, 3], [2, 2, 2]), "human_scores="),
        (lambda it: agreement([1, 2], [1, 2]), "judge_scores="),
        (lambda it: agreement([1, 2, 3], [1, 2, 3, 4]), "judge_scores="),
        (lambda it: Scores(6, 3), "instruction_following="),
        (lambda it: Scores(3, 2.5), "visual_consistency="),
        (lambda it: MetricJudge().score(it, it.source, "zoomed"), "mode="),
        (lambda it: MetricJudge().score(it, it.source[:64], "tool"), "edited="),
        (lambda it: MetricJudge().score(it, it.source * 2, "tool"), "edited="),
        (lambda it: MetricJudge().score(it, it.source[..., 0], "tool"), "edited="),
        (lambda it: check_image("image", np.full((4, 4, 3), np.nan)), "image="),
        (lambda it: check_image("image", np.ones((4, 4, 3), dtype=int)), "image="),
        (lambda it: MetricJudge(view_size=4), "view_size="),
        (lambda it: MetricJudge(kappa=0.0), "kappa="),
        (lambda it: MetricJudge(area_scale=-1.0), "area_scale="),
        (lambda it: bounding_box(np.zeros((8, 8), bool)), "mask="),
    ],
)
def test_bad_inputs_name_the_argument(item, call, name):
    with pytest.raises(ValueError, match=name):
        call(item)


def test_uint8_images_are_accepted_as_such(item):
    as_uint8 = np.round(item.source * 255).astype(np.uint8)
    assert MetricJudge().score(item, as_uint8, "tool").instruction_following == 1
