"""The operator's tool set (SPEC §9): declarations for the model and validation of its calls.

A turn may contain any number of pre-decision memory calls (``save_note``, ``read_note``,
``plan``, ``recall_history``) whose answers come back inside the same turn, and must end with exactly one
device action or ``finish``. Invalid calls never raise out of this module: ``validate_call``
raises ``ToolCallError`` whose message is sent back to the model so it can correct itself.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Any

from artemis_cli.device.intents import url_problem
from artemis_cli.device.protocol import KEY_NAMES
from artemis_cli.memory.checklist import PLAN_DESCRIPTION, PLAN_PARAMETERS, ChecklistError, parse_items
from artemis_cli.memory.recall_args import RECALL_HISTORY_DESCRIPTION, RECALL_HISTORY_PARAMETERS
from artemis_cli.models.base import FunctionCall, ToolDecl

ACTION_TOOLS = (
    "tap", "double_tap", "long_press", "scroll", "swipe", "drag", "type_text", "press_key", "launch_app", "open_url",
    "stop_app", "wait", "finish",
)
MEMORY_TOOLS = ("save_note", "read_note", "plan", "recall_history")
DIRECTIONS = ("up", "down", "left", "right")
#: the keys press_key offers (every backend presses them: device.protocol.KEYCODES)
TOOL_KEYS = KEY_NAMES
MAX_WAIT_S = 10.0
#: Swipes a ``scroll`` with ``to_end`` makes at most before it gives up on the content stopping.
MAX_SCROLLS = 10
#: An action's ``intent`` (what the model expects it to do) is kept to this many characters.
MAX_INTENT_CHARS = 200
#: type_text's ``secret``: what the model is told of it (the value never reaches a request)
SECRET_DESCRIPTION = ("The name of one of the task's secrets to type instead of text; its value is never "
                      "shown to you.")
INTENT_DESCRIPTION = "What you expect this action to do, in a few words (e.g. \"opens the Wi-Fi settings\")."
_WS = re.compile(r"\s+")


class ToolCallError(Exception):
    """A malformed call; ``str(exc)`` is the correction sent back to the model."""


@dataclass(frozen=True)
class ToolCall:
    """A validated call: ``name`` plus normalised ``args``; ``call`` is what the model sent."""

    name: str
    args: dict[str, Any]
    call: FunctionCall
    #: what the model said it expects the action to do (``intent``, kept out of ``args`` so it
    #: never reaches the device or the repeated-action key); None when it gave none
    intent: str | None = None

    @property
    def is_action(self) -> bool:
        return self.name in ACTION_TOOLS


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


_POINT = {
    "index": {"type": "integer", "description": "Element index from the current element list (preferred)."},
    "x": {"type": "number", "description": "X coordinate, with y, only when no listed element fits."},
    "y": {"type": "number", "description": "Y coordinate, with x, only when no listed element fits."},
}
_DIRECTION = {"type": "string", "enum": list(DIRECTIONS)}


def takes_intent(name: str) -> bool:
    """Every action tool but ``finish`` (whose ``answer`` says it all) carries ``intent``."""
    return name in ACTION_TOOLS and name != "finish"


def _with_intent(decl: ToolDecl) -> ToolDecl:
    """``decl`` with the ``intent`` property, declared required so models fill it in (a call
    without it is still accepted: ``validate_call`` records None)."""
    if not takes_intent(decl.name):
        return decl
    params = copy.deepcopy(decl.parameters)
    params.setdefault("properties", {})["intent"] = {"type": "string", "description": INTENT_DESCRIPTION}
    params["required"] = [*params.get("required", []), "intent"]
    return ToolDecl(decl.name, decl.description, params)


def tool_declarations(coordinates: str = "pixels") -> list[ToolDecl]:
    """The tool list, in a fixed order (it is part of the byte-stable prompt prefix); every
    action tool but ``finish`` carries ``intent`` (:func:`_with_intent`)."""
    return [_with_intent(decl) for decl in _declarations(coordinates)]


def _declarations(coordinates: str) -> list[ToolDecl]:
    space = (
        "Coordinates are screen pixels."
        if coordinates == "pixels"
        else "Coordinates are normalised to a 0-1000 grid on both axes."
    )
    return [
        ToolDecl("tap", f"Tap an element: give `index` (preferred), or x and y. {space}", _obj(dict(_POINT))),
        ToolDecl(
            "double_tap",
            "Tap twice quickly (zoom a photo or map, select a word): give `index` (preferred), or x and "
            f"y. {space}",
            _obj(dict(_POINT)),
        ),
        ToolDecl("long_press", f"Long-press an element: give `index` (preferred), or x and y. {space}",
                 _obj(dict(_POINT))),
        ToolDecl(
            "scroll",
            "Scroll content to see more of it. `direction` is where the content you want is: 'down' "
            "shows what is below (the finger moves up), 'up' what is above, 'right' what is to the "
            "right. Inside the scrollable element `index`, else the screen's main scrollable area. "
            f"`to_end: true` keeps scrolling until the content stops moving (at most {MAX_SCROLLS} swipes).",
            _obj(
                {
                    "direction": {**_DIRECTION, "description": "Where the content you want to see is."},
                    "index": {"type": "integer", "description": "Scrollable element to scroll inside."},
                    "to_end": {"type": "boolean", "description": "Scroll until the content stops moving."},
                },
                ["direction"],
            ),
        ),
        ToolDecl(
            "swipe",
            "Move the finger quickly across the screen (pages, carousels, dismissing a card, pulling "
            "down the notification shade). `direction` is the way the FINGER moves, the opposite of "
            "`scroll`'s: 'up' reveals what is below. To see more of a list, use `scroll`. Give "
            f"`direction` (optionally inside element `index`), or all of x1, y1, x2, y2. {space}",
            _obj(
                {
                    "direction": {**_DIRECTION, "description": "The way the finger moves."},
                    "index": {"type": "integer", "description": "Element to swipe inside (with direction)."},
                    "x1": {"type": "number", "description": "Start X (without direction)."},
                    "y1": {"type": "number", "description": "Start Y (without direction)."},
                    "x2": {"type": "number", "description": "End X (without direction)."},
                    "y2": {"type": "number", "description": "End Y (without direction)."},
                }
            ),
        ),
        ToolDecl(
            "drag",
            "Press, hold, then move to a destination and release: reorder a list item, move a "
            "slider, drag an icon. From element `index` or point x1,y1 to element `to_index` or "
            f"point x2,y2. {space}",
            _obj(
                {
                    "index": {"type": "integer", "description": "Element to drag."},
                    "x1": {"type": "number", "description": "Start X, when no element fits."},
                    "y1": {"type": "number", "description": "Start Y, when no element fits."},
                    "to_index": {"type": "integer", "description": "Element to drop it on."},
                    "x2": {"type": "number", "description": "Drop X, when no element fits."},
                    "y2": {"type": "number", "description": "Drop Y, when no element fits."},
                }
            ),
        ),
        ToolDecl(
            "type_text",
            "Type text into a text field: give `text`, or `secret` to type one of the task's secrets. "
            "With `index` the field is tapped first, else the focused field takes it; `clear` empties "
            "it first; `submit` presses enter afterwards.",
            _obj(
                {
                    "text": {"type": "string", "description": "The text to type."},
                    "secret": {"type": "string", "description": SECRET_DESCRIPTION},
                    "index": {"type": "integer", "description": "Text field to type into."},
                    "clear": {"type": "boolean", "description": "Empty the field first."},
                    "submit": {"type": "boolean", "description": "Press enter after typing."},
                },
            ),
        ),
        ToolDecl(
            "press_key",
            "Press a device key: back, home, enter, recents (the app switcher), delete (backspace), "
            "tab, escape, search, menu, volume_up, volume_down.",
            _obj({"key": {"type": "string", "enum": list(TOOL_KEYS), "description": "The key to press."}}, ["key"]),
        ),
        ToolDecl(
            "launch_app",
            "Open an app by the name a person calls it (\"Messages\", \"Play Store\") or by package "
            "(com.example.app). When nothing installed matches, the error names the apps with a similar "
            "name, else the apps on the phone: launch one of those by package.",
            _obj({"app": {"type": "string", "description": "App name or package."}}, ["app"]),
        ),
        ToolDecl(
            "open_url",
            "Open a link in the app that handles it (a VIEW intent): a web page, or an app's own "
            "link (myapp://…). Fails when no app on the phone opens it.",
            _obj({"url": {"type": "string", "description": "The URL, with its scheme (https://…)."}}, ["url"]),
        ),
        ToolDecl(
            "stop_app",
            "Force-stop an app (it closes; its next launch starts fresh). Use it to restart an app "
            "that is stuck, not to leave one: press_key home does that.",
            _obj({"package": {"type": "string", "description": "App name or package to stop."}}, ["package"]),
        ),
        ToolDecl(
            "wait",
            f"Wait for the screen to settle (at most {MAX_WAIT_S:g} seconds).",
            _obj({"seconds": {"type": "number", "description": f"Seconds to wait, 0 to {MAX_WAIT_S:g}."}},
                 ["seconds"]),
        ),
        ToolDecl(
            "finish",
            "End the task. `success` says whether the goal is met; `answer` carries any requested "
            "information or the reason for giving up.",
            _obj(
                {
                    "success": {"type": "boolean", "description": "Whether the goal is met."},
                    "answer": {"type": "string", "description": "Requested information, or why you give up."},
                },
                ["success"],
            ),
        ),
        ToolDecl(
            "save_note",
            "Save a note under a key for later steps (does not end the turn).",
            _obj(
                {
                    "key": {"type": "string", "description": "A short name for the note."},
                    "content": {"type": "string", "description": "What to remember."},
                },
                ["key", "content"],
            ),
        ),
        ToolDecl(
            "read_note",
            "Read a note saved earlier (does not end the turn).",
            _obj({"key": {"type": "string", "description": "The note's key."}}, ["key"]),
        ),
        ToolDecl("plan", PLAN_DESCRIPTION, copy.deepcopy(PLAN_PARAMETERS)),
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


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _str(args: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    """A string argument; a lone surrogate in it (JSON can carry ``"\\ud800"``, no UTF-8 store,
    wire or device takes it) is U+FFFD, as a UI dump's is."""
    value = args.get(key)
    if value is None:
        if required:
            raise ToolCallError(f"`{key}` is required")
        return None
    if not isinstance(value, str):
        raise ToolCallError(f"`{key}` must be a string, got {value!r}")
    return _LONE_SURROGATE.sub("\ufffd", value)


def _point_args(args: dict[str, Any], index_key: str = "index", x_key: str = "x", y_key: str = "y",
                which: str | None = None) -> dict[str, Any]:
    """A point: an element index (preferred) or both coordinates; ``which`` names a drag's end."""
    index = _int(args, index_key)
    x, y = _num(args, x_key), _num(args, y_key)
    if index is not None:
        return {index_key: index}
    if x is None or y is None:
        lead = f"give the drag's {which}: " if which else "give "
        raise ToolCallError(f"{lead}`{index_key}` (preferred) or both `{x_key}` and `{y_key}`")
    return {x_key: x, y_key: y}


def intent_text(value: Any) -> str | None:
    """An action's ``intent`` as stored: one line, cut to MAX_INTENT_CHARS plus "…"; None when it
    is missing, empty or not a string (a bad intent never rejects the action it describes)."""
    if not isinstance(value, str):
        return None
    text = _WS.sub(" ", value).strip()
    if not text:
        return None
    return text if len(text) <= MAX_INTENT_CHARS else text[:MAX_INTENT_CHARS] + "…"


@functools.cache  # one small frozenset per tool name the code declares (an unknown name raises): a few KB
def accepted_args(name: str) -> frozenset[str]:
    """The argument names tool ``name`` takes (its declared properties; ``intent`` for actions)."""
    decl = next(d for d in tool_declarations() if d.name == name)
    return frozenset(decl.parameters.get("properties", {}))


def _refuse_unknown_args(name: str, args: dict[str, Any]) -> None:
    """A call naming an argument the tool does not take is refused (a model that sends
    ``{"element": 3}`` learns at once that nothing was tapped, rather than have it ignored).
    ``intent`` is never refused: it only describes the call (a tool without it drops it)."""
    extra = sorted(str(k) for k in args if k not in accepted_args(name) and k != "intent")
    if extra:
        what = ", ".join(f"`{k[:40]}`" for k in extra[:5])
        takes = ", ".join(sorted(accepted_args(name))) or "no arguments"
        raise ToolCallError(f"{name} takes no {what}; its arguments are: {takes}")


def validate_call(call: FunctionCall) -> ToolCall:
    """Check a call's name and argument types; return it normalised or raise ToolCallError.
    An action's ``intent`` is taken out of its args into ``ToolCall.intent``."""
    name = call.name
    args = call.args if isinstance(call.args, dict) else {}
    intent = intent_text(args.get("intent")) if takes_intent(name) else None
    known = ACTION_TOOLS + MEMORY_TOOLS
    if name not in known:
        raise ToolCallError(f"unknown tool {name!r}; available tools: {', '.join(known)}")
    _refuse_unknown_args(name, args)
    out: dict[str, Any]
    if name in ("tap", "double_tap", "long_press"):
        out = _point_args(args)
    elif name == "scroll":
        direction = _str(args, "direction")
        if direction not in DIRECTIONS:
            raise ToolCallError(f"`direction` must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        out = {"direction": direction}
        index = _int(args, "index")
        if index is not None:
            out["index"] = index
        if _bool(args, "to_end"):
            out["to_end"] = True
    elif name == "drag":
        out = _point_args(args, "index", "x1", "y1", "from") | _point_args(args, "to_index", "x2", "y2", "to")
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
        text = _str(args, "text", required=False)
        secret = _str(args, "secret", required=False)
        if text is not None and secret is not None:
            raise ToolCallError("give `text` or `secret`, not both")
        if text is None and secret is None:
            raise ToolCallError("`text` is required (or `secret`: the name of one of the task's secrets)")
        out = {"text": text} if secret is None else {"secret": secret.strip()}
        out.update({"clear": _bool(args, "clear"), "submit": _bool(args, "submit")})
        index = _int(args, "index")
        if index is not None:
            out["index"] = index
    elif name == "press_key":
        key = _str(args, "key")
        if key not in TOOL_KEYS:
            raise ToolCallError(f"`key` must be one of {', '.join(TOOL_KEYS)}; got {key!r}")
        out = {"key": key}
    elif name == "launch_app":
        app = (_str(args, "app") or "").strip()
        if not app:
            raise ToolCallError("`app` must name an app")
        out = {"app": app}
    elif name == "open_url":
        url = (_str(args, "url") or "").strip()
        problem = url_problem(url)
        if problem:
            raise ToolCallError(f"`url`: {problem}")
        out = {"url": url}
    elif name == "stop_app":
        package = (_str(args, "package") or "").strip()
        if not package:
            raise ToolCallError("`package` must name an app")
        out = {"app": package}
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
    elif name == "plan":
        try:
            out = {"items": [i.to_dict() for i in parse_items(args.get("items"))]}
        except ChecklistError as exc:
            raise ToolCallError(f"plan: {exc}") from None
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
    return ToolCall(name=name, args=out, call=call, intent=intent)
