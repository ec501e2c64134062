"""The action space: validation, the UI-TARS strings and their parser."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_recap import Action, parse_action

coord = st.integers(0, 255)


@given(st.sampled_from(["click", "drag"]), coord, coord, coord, coord)
def test_pointer_actions_round_trip_through_their_strings(kind, x, y, x2, y2):
    action = Action(kind, x, y, x2, y2) if kind == "drag" else Action(kind, x, y)
    assert parse_action(action.to_string()) == action


@given(st.text("0123456789", min_size=1, max_size=4))
def test_type_actions_round_trip(text):
    assert parse_action(f"Thought: read it.\nAction: {Action('type', text=text).to_string()}") == Action(
        "type", text=text
    )


def test_parser_takes_the_last_action_of_a_reply():
    reply = "Reflection: overshoot\nNot click(start_box='(1,2)') but drag(start_box='(8,30)', end_box='(41,30)')"
    assert parse_action(reply) == Action("drag", 8, 30, 41, 30)


@pytest.mark.parametrize("reply", ["", "click somewhere", "click(start_box='(x,y)')", "press(enter)"])
def test_parser_rejects_replies_without_an_action(reply):
    with pytest.raises(ValueError, match="reply="):
        parse_action(reply)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"kind": "scroll"}, "kind"),
        ({"kind": "click", "x": float("nan")}, "x"),
        ({"kind": "drag", "y2": "3"}, "y2"),
        ({"kind": "click", "y": True}, "y"),
        ({"kind": "type", "text": "12a"}, "text"),
        ({"kind": "type", "text": ""}, "text"),
        ({"kind": "type", "text": "12345"}, "text"),
    ],
)
def test_action_rejects_bad_fields(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Action(**kwargs)
