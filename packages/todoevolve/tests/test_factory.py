import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_todoevolve.factory import ALL_CONFIGS, AXES, FIXED_PLANNERS, ParseError, PlannerConfig, parse_config


def test_design_space_is_the_full_grid():
    assert len(ALL_CONFIGS) == len(set(ALL_CONFIGS)) == 4 * 3 * 3 * 2
    assert set(FIXED_PLANNERS.values()) <= set(ALL_CONFIGS) and len(FIXED_PLANNERS) == 7


@given(st.sampled_from(ALL_CONFIGS))
def test_text_and_index_round_trips(config):
    assert parse_config(config.render()) == config
    assert PlannerConfig.from_indices(config.indices) == config
    assert config.tokens == tuple(getattr(config, axis) for axis in AXES)


def test_parse_tolerates_chatter_and_takes_the_first_value():
    text = "Analysis: fan-out.\n- Topology: DAG\ninitialization = verified\nadaptation: none\n"
    text += "navigation: parallel\ntopology: tree"
    assert parse_config(text) == PlannerConfig("dag", "verified", "none", "parallel")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("topology: dag\ninitialization: direct\nadaptation: none", "missing \\['navigation'\\]"),
        ("topology: star\ninitialization: direct\nadaptation: none\nnavigation: parallel", "^topology='star'"),
        ("", "missing"),
        (None, "^text=None"),
    ],
)
def test_unparseable_replies(text, match):
    with pytest.raises(ParseError, match=match):
        parse_config(text)


@pytest.mark.parametrize("axis", list(AXES))
def test_unknown_axis_value_names_the_axis_and_the_choices(axis):
    with pytest.raises(ValueError, match=f"^{axis}='bogus': expected one of"):
        PlannerConfig(**{axis: "bogus"})
