"""Tool-call validation: every malformed call becomes a correction for the model, never a crash."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.tools import (
    ACTION_TOOLS,
    MEMORY_TOOLS,
    ToolCallError,
    tool_declarations,
    validate_call,
)


def test_declarations_are_stable_and_complete() -> None:
    names = [t.name for t in tool_declarations()]
    assert names == [*ACTION_TOOLS, *MEMORY_TOOLS]
    assert tool_declarations() == tool_declarations()  # deterministic: part of the stable prefix


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("tap", {"index": 3}, {"index": 3}),
        ("tap", {"index": 3.0}, {"index": 3}),
        ("tap", {"x": 10, "y": 20.5}, {"x": 10.0, "y": 20.5}),
        ("swipe", {"direction": "up"}, {"direction": "up"}),
        ("swipe", {"x1": 1, "y1": 2, "x2": 3, "y2": 4}, {"x1": 1.0, "y1": 2.0, "x2": 3.0, "y2": 4.0}),
        ("type_text", {"text": "hi", "index": 2}, {"text": "hi", "index": 2, "clear": False, "submit": False}),
        ("press_key", {"key": "back"}, {"key": "back"}),
        ("wait", {"seconds": 99}, {"seconds": 10.0}),
        ("finish", {"success": True}, {"success": True, "answer": ""}),
    ],
)
def test_valid_calls_are_normalised(name: str, args: dict, expected: dict) -> None:
    assert validate_call(FunctionCall(name, args)).args == expected


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("tapp", {}, "unknown tool 'tapp'"),
        ("tap", {}, "give `index`"),
        ("tap", {"index": "3"}, "`index` must be an integer"),
        ("tap", {"index": -1}, "must be ≥ 0"),
        ("tap", {"x": "left", "y": 3}, "`x` must be a number"),
        ("swipe", {"direction": "sideways"}, "`direction` must be one of"),
        ("type_text", {}, "`text` is required"),
        ("type_text", {"text": 5}, "`text` must be a string"),
        ("press_key", {"key": "power"}, "`key` must be one of"),
        ("finish", {}, "`success` is required"),
        ("finish", {"success": "yes"}, "must be true or false"),
        ("launch_app", {"app": "  "}, "must name an app"),
    ],
)
def test_malformed_calls_explain_themselves(name: str, args: dict, message: str) -> None:
    with pytest.raises(ToolCallError, match=message.replace("(", r"\(").replace("`", "`")):
        validate_call(FunctionCall(name, args))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


@settings(deadline=None)
@given(
    name=st.sampled_from([*ACTION_TOOLS, *MEMORY_TOOLS, "bogus"]),
    args=st.dictionaries(
        st.sampled_from(["index", "x", "y", "direction", "text", "key", "app", "seconds", "success", "query"]),
        json_values,
        max_size=5,
    ),
)
def test_arbitrary_arguments_never_crash(name: str, args: dict) -> None:
    with contextlib.suppress(ToolCallError):
        validate_call(FunctionCall(name, args))
