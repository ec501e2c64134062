"""The benchmark builder: shapes, areas, reference edits and regions, and its bad inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_dlebench.data import (
    INSTRUCTION_TYPES,
    SHAPE_AREA,
    SHAPES,
    SMALL_AREA,
    Shape,
    build_benchmark,
    make_item,
    photo_crop,
    shape_mask,
)


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_area_matches_its_closed_form(shape):
    mask = shape_mask(Shape(shape, "red", "plain", (100.0, 100.0), 60.0), 200)
    assert mask.sum() == pytest.approx(SHAPE_AREA[shape] * 60.0**2, rel=0.02)


def test_benchmark_has_every_type_and_small_targets():
    items = build_benchmark(2, 64, seed=0)
    assert [it.instruction.type for it in items] == [t for t in INSTRUCTION_TYPES for _ in range(2)]
    for it in items:
        assert it.source.shape == it.reference.shape == (64, 64, 3)
        assert 0 <= it.source.min() and it.source.max() <= 1
        # 1%-10% of the area, up to the pixel grid of a 64 x 64 image
        assert 0.8 * SMALL_AREA[0] <= it.area_ratio <= 1.1 * SMALL_AREA[1], it.instruction.text
    assert build_benchmark(1, 64, seed=3)[0].instruction == build_benchmark(1, 64, seed=3)[0].instruction


@given(st.sampled_from(INSTRUCTION_TYPES), st.integers(0, 2**31), st.booleans())
def test_reference_differs_from_source_only_inside_the_region(kind, seed, large):
    area = (0.25, 0.4) if large else SMALL_AREA
    item = make_item(kind, 64, area, np.random.default_rng(seed))
    changed = np.abs(item.reference - item.source).max(-1) > 0
    assert changed.any()
    assert not changed[~item.region].any()
    assert item.instruction.text.endswith(".")


def test_photo_crop_is_a_real_photograph_in_range():
    crop = photo_crop("astronaut", 48, np.random.default_rng(0))
    assert crop.shape == (48, 48, 3) and 0 <= crop.min() and crop.max() <= 1 and crop.std() > 0.05


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: make_item("rotate", 64, SMALL_AREA, np.random.default_rng(0)), "kind="),
        (lambda: make_item("add", 64, (0.0, 0.1), np.random.default_rng(0)), r"area_range\[0\]="),
        (lambda: make_item("add", 64, (0.05, 1.2), np.random.default_rng(0)), r"area_range\[1\]="),
        (lambda: make_item("add", 64, (0.1, 0.05), np.random.default_rng(0)), "area_range="),
        (lambda: make_item("add", 64, 0.05, np.random.default_rng(0)), "area_range="),
        (lambda: make_item("add", 16, SMALL_AREA, np.random.default_rng(0)), "size="),
        (lambda: build_benchmark(0), "per_type="),
        (lambda: photo_crop("lena", 32, np.random.default_rng(0)), "name="),
    ],
)
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
