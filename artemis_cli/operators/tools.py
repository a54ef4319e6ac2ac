"""The operator's tool set (SPEC §9): declarations for the model and validation of its calls.

A turn may contain any number of pre-decision memory calls (``save_note``, ``read_note``,
``recall_history``) whose answers come back inside the same turn, and must end with exactly one
device action or ``finish``. Invalid calls never raise out of this module: ``validate_call``
raises ``ToolCallError`` whose message is sent back to the model so it can correct itself.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from artemis_cli.device.protocol import KEY_NAMES
from artemis_cli.memory.recall_args import RECALL_HISTORY_DESCRIPTION, RECALL_HISTORY_PARAMETERS
from artemis_cli.models.base import FunctionCall, ToolDecl

ACTION_TOOLS = ("tap", "long_press", "swipe", "type_text", "press_key", "launch_app", "wait", "finish")
MEMORY_TOOLS = ("save_note", "read_note", "recall_history")
DIRECTIONS = ("up", "down", "left", "right")
MAX_WAIT_S = 10.0


class ToolCallError(Exception):
    """A malformed call; ``str(exc)`` is the correction sent back to the model."""


@dataclass(frozen=True)
class ToolCall:
    """A validated call: ``name`` plus normalised ``args``; ``call`` is what the model sent."""

    name: str
    args: dict[str, Any]
    call: FunctionCall

    @property
    def is_action(self) -> bool:
        return self.name in ACTION_TOOLS


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


_POINT = {
    "index": {"type": "integer", "description": "Element index from the current element list."},
    "x": {"type": "number", "description": "X coordinate (only when no element fits)."},
    "y": {"type": "number", "description": "Y coordinate (only when no element fits)."},
}


def tool_declarations(coordinates: str = "pixels") -> list[ToolDecl]:
    """The tool list, in a fixed order (it is part of the byte-stable prompt prefix)."""
    space = (
        "Coordinates are screen pixels."
        if coordinates == "pixels"
        else "Coordinates are normalised to a 0-1000 grid on both axes."
    )
    return [
        ToolDecl("tap", f"Tap an element by index (preferred) or a point. {space}", _obj(dict(_POINT))),
        ToolDecl("long_press", f"Long-press an element by index or a point. {space}", _obj(dict(_POINT))),
        ToolDecl(
            "swipe",
            "Swipe. `direction` is the way the finger moves: 'up' scrolls a list to reveal what is "
            "below, 'down' reveals what is above. Optionally inside element `index`, or give "
            f"x1,y1,x2,y2 explicitly. {space}",
            _obj(
                {
                    "direction": {"type": "string", "enum": list(DIRECTIONS)},
                    "index": {"type": "integer"},
                    "x1": {"type": "number"},
                    "y1": {"type": "number"},
                    "x2": {"type": "number"},
                    "y2": {"type": "number"},
                }
            ),
        ),
        ToolDecl(
            "type_text",
            "Type text. With `index` the field is tapped first; `clear` empties it first; "
            "`submit` presses enter afterwards.",
            _obj(
                {
                    "text": {"type": "string"},
                    "index": {"type": "integer"},
                    "clear": {"type": "boolean"},
                    "submit": {"type": "boolean"},
                },
                ["text"],
            ),
        ),
        ToolDecl(
            "press_key",
            "Press a device key.",
            _obj({"key": {"type": "string", "enum": ["back", "home", "enter", "recents", "delete"]}}, ["key"]),
        ),
        ToolDecl(
            "launch_app",
            "Open an app by the name a person calls it (\"Messages\", \"Play Store\") or by package "
            "(com.example.app). When nothing installed matches, the error names the closest installed "
            "packages: launch one of those by package.",
            _obj({"app": {"type": "string"}}, ["app"]),
        ),
        ToolDecl(
            "wait",
            f"Wait for the screen to settle (at most {MAX_WAIT_S:g} seconds).",
            _obj({"seconds": {"type": "number"}}, ["seconds"]),
        ),
        ToolDecl(
            "finish",
            "End the task. `success` says whether the goal is met; `answer` carries any requested "
            "information or the reason for giving up.",
            _obj({"success": {"type": "boolean"}, "answer": {"type": "string"}}, ["success"]),
        ),
        ToolDecl(
            "save_note",
            "Save a note under a key for later steps (does not end the turn).",
            _obj({"key": {"type": "string"}, "content": {"type": "string"}}, ["key", "content"]),
        ),
        ToolDecl(
            "read_note",
            "Read a note saved earlier (does not end the turn).",
            _obj({"key": {"type": "string"}}, ["key"]),
        ),
        ToolDecl("recall_history", RECALL_HISTORY_DESCRIPTION, copy.deepcopy(RECALL_HISTORY_PARAMETERS)),
    ]


def _num(args: dict[str, Any], key: str) -> float | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolCallError(f"`{key}` must be a number, got {value!r}")
    return float(value)


def _int(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolCallError(f"`{key}` must be an integer, got {value!r}")
    if value < 0:
        raise ToolCallError(f"`{key}` must be ≥ 0, got {value}")
    return value


def _bool(args: dict[str, Any], key: str, default: bool = False) -> bool:
    value = args.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolCallError(f"`{key}` must be true or false, got {value!r}")
    return value


def _str(args: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolCallError(f"`{key}` is required")
        return None
    if not isinstance(value, str):
        raise ToolCallError(f"`{key}` must be a string, got {value!r}")
    return value


def _point_args(args: dict[str, Any]) -> dict[str, Any]:
    index = _int(args, "index")
    x, y = _num(args, "x"), _num(args, "y")
    if index is not None:
        return {"index": index}
    if x is None or y is None:
        raise ToolCallError("give `index` (preferred) or both `x` and `y`")
    return {"x": x, "y": y}


def validate_call(call: FunctionCall) -> ToolCall:
    """Check a call's name and argument types; return it normalised or raise ToolCallError."""
    name = call.name
    args = call.args if isinstance(call.args, dict) else {}
    known = ACTION_TOOLS + MEMORY_TOOLS
    if name not in known:
        raise ToolCallError(f"unknown tool {name!r}; available tools: {', '.join(known)}")
    out: dict[str, Any]
    if name in ("tap", "long_press"):
        out = _point_args(args)
    elif name == "swipe":
        direction = _str(args, "direction", required=False)
        index = _int(args, "index")
        coords = [_num(args, k) for k in ("x1", "y1", "x2", "y2")]
        if direction is not None:
            if direction not in DIRECTIONS:
                raise ToolCallError(f"`direction` must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
            out = {"direction": direction}
            if index is not None:
                out["index"] = index
        elif all(c is not None for c in coords):
            out = dict(zip(("x1", "y1", "x2", "y2"), coords, strict=True))
        else:
            raise ToolCallError("give `direction` (up/down/left/right) or all of x1, y1, x2, y2")
    elif name == "type_text":
        text = _str(args, "text")
        out = {"text": text, "clear": _bool(args, "clear"), "submit": _bool(args, "submit")}
        index = _int(args, "index")
        if index is not None:
            out["index"] = index
    elif name == "press_key":
        key = _str(args, "key")
        if key not in KEY_NAMES:
            raise ToolCallError(f"`key` must be one of back, home, enter, recents, delete; got {key!r}")
        out = {"key": key}
    elif name == "launch_app":
        app = (_str(args, "app") or "").strip()
        if not app:
            raise ToolCallError("`app` must name an app")
        out = {"app": app}
    elif name == "wait":
        seconds = _num(args, "seconds")
        if seconds is None or seconds < 0:
            raise ToolCallError("`seconds` must be a number ≥ 0")
        out = {"seconds": min(seconds, MAX_WAIT_S)}
    elif name == "finish":
        if "success" not in args:
            raise ToolCallError("`success` is required (true or false)")
        out = {"success": _bool(args, "success"), "answer": _str(args, "answer", required=False) or ""}
    elif name == "save_note":
        out = {"key": _str(args, "key"), "content": _str(args, "content")}
    elif name == "read_note":
        out = {"key": _str(args, "key")}
    else:  # recall_history
        out = {
            "query": _str(args, "query", required=False) or "",
            "step_range": _str(args, "step_range", required=False),
            "at": _str(args, "at", required=False),
            "package": _str(args, "package", required=False),
            "include_details": _bool(args, "include_details"),
            "include_images": _bool(args, "include_images"),
            "max_results": _int(args, "max_results") or 5,
        }
    return ToolCall(name=name, args=out, call=call)
