"""The bounds of what an MCP client may send ``artemis mcp``, checked before anything reaches the
phone or the session: a call out of bounds gets an error result naming the bound, and the session
goes on. The tool schemas declare the same bounds (``maxLength``, ``minimum``/``maximum``), so a
client's model sees them; coordinates are checked against the screen.
"""

from __future__ import annotations

import math
from typing import Any

from artemis_cli.operators.tools import MAX_WAIT_S

#: ``type_text``'s ``text``: a long message or a pasted paragraph, not a file.
MAX_TEXT_CHARS = 5_000
#: A saved note's ``content``.
MAX_NOTE_CHARS = 5_000
#: Any other string argument (an app, a URL, a key, a query, an intent, a note's key).
MAX_STRING_CHARS = 1_000
#: An element index (the element list is far shorter).
MAX_INDEX = 9_999
#: Argument names that are screen coordinates, by axis.
_X, _Y = ("x", "x1", "x2"), ("y", "y1", "y2")
_INDICES = ("index", "to_index")


class OutOfBounds(ValueError):
    """A call argument past its bound; the message is the client's answer."""


def string_limit(tool: str, arg: str) -> int:
    if tool == "type_text" and arg == "text":
        return MAX_TEXT_CHARS
    if tool == "note" and arg == "content":
        return MAX_NOTE_CHARS
    return MAX_STRING_CHARS


def check_args(tool: str, args: dict[str, Any], screen: tuple[int, int]) -> None:
    """OutOfBounds unless every argument of ``tool`` is within its bound (types and required
    arguments are the tool validation's to check)."""
    width, height = screen
    for key, value in args.items():
        name = str(key)[:40]
        if isinstance(value, str):
            limit = string_limit(tool, name)
            if len(value) > limit:
                raise OutOfBounds(f"`{name}` is {len(value):,} characters; {tool} takes at most {limit:,}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            continue
        elif not math.isfinite(value):
            raise OutOfBounds(f"`{name}` must be a finite number")
        elif name in _X + _Y:
            size = width if name in _X else height
            if not 0 <= value < size:
                axis = "x" if name in _X else "y"
                raise OutOfBounds(f"`{name}` = {value:g} is off the screen ({axis} is 0 to {size - 1}; the "
                                  f"screen is {width}x{height} pixels)")
        elif name in _INDICES and not 0 <= value <= MAX_INDEX:
            raise OutOfBounds(f"`{name}` = {value:g} is not an element index (0 to {MAX_INDEX})")
        elif tool == "wait" and name == "seconds" and not 0 <= value <= MAX_WAIT_S:
            raise OutOfBounds(f"`seconds` must be 0 to {MAX_WAIT_S:g}, got {value:g}")


def bounded_schema(tool: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a tool's input schema, changed in place) with the bounds declared."""
    for key, prop in schema.get("properties", {}).items():
        if prop.get("type") == "string":
            prop["maxLength"] = string_limit(tool, key)
        elif tool == "wait" and key == "seconds":
            prop.update(minimum=0, maximum=MAX_WAIT_S)
        elif key in _X + _Y + _INDICES:
            prop["minimum"] = 0
    return schema
