"""Turn a validated tool call into pixel-level device operations with element semantics.

``plan_action`` resolves indices and model coordinates against the observation the model saw
(raising ToolCallError — sent back to the model — for an index or point that does not exist);
``execute`` performs it. Every coordinate is enriched by hit testing before it is recorded,
swipe ends included.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.device.apps import resolve_app
from artemis_cli.device.protocol import Device
from artemis_cli.engine.records import ResultStatus
from artemis_cli.errors import DeviceError, DeviceOffline
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.tools import ToolCall, ToolCallError
from artemis_cli.operators.typing import Probe, TypingTrace, type_into
from artemis_cli.perception.hittest import hit_test, target_for_element
from artemis_cli.perception.types import Element, Target, UITree

REDACTED = "••••••"


@dataclass
class PlannedAction:
    type: str
    args: dict[str, Any]
    x: int | None = None
    y: int | None = None
    x2: int | None = None
    y2: int | None = None
    target: Target = field(default_factory=Target)
    target_end: Target | None = None
    element: Element | None = None
    secret: str | None = None  # the real text for a password field; never recorded

    @property
    def recorded_args(self) -> dict[str, Any]:
        return dict(self.args)

    def phrase(self) -> str:
        """One-line description for progress output and ledgers."""
        t = self.target.describe() if self.target.label_source != "none" else ""
        if self.type in ("tap", "long_press"):
            return f"{self.type} {t or f'({self.x},{self.y})'}"
        if self.type == "swipe":
            d = self.args.get("direction")
            return f"swipe {d}" if d else f"swipe ({self.x},{self.y})->({self.x2},{self.y2})"
        if self.type == "type_text":
            return f"type {self.args.get('text')!r}" + (f" into {t}" if t else "")
        if self.type == "press_key":
            return f"press {self.args.get('key')}"
        if self.type == "launch_app":
            return f"launch {self.args.get('package') or self.args.get('app')}"
        if self.type == "wait":
            return f"wait {self.args.get('seconds')}s"
        if self.type == "finish":
            return f"finish success={self.args.get('success')}"
        return self.type


@dataclass
class ActionResult:
    status: ResultStatus
    detail: str = ""
    #: What ``type_text`` saw of its field (``operators.typing``); read by ``outcome.assess``.
    typing: TypingTrace | None = None


def _element(obs: Observation, index: int) -> Element:
    if index >= len(obs.elements):
        n = len(obs.elements)
        raise ToolCallError(
            f"no element with index {index}; this screen has indices 0-{n - 1}" if n else "this screen lists no elements; use x/y"
        )
    return obs.elements[index]


def _point(obs: Observation, x: float, y: float) -> tuple[int, int]:
    try:
        return obs.space.to_pixels(x, y)
    except ValueError as exc:
        raise ToolCallError(str(exc)) from exc


def _swipe_vector(direction: str, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    left, top, right, bottom = box
    cx, cy = (left + right) // 2, (top + bottom) // 2
    dy = int((bottom - top) * 0.3)
    dx = int((right - left) * 0.3)
    return {
        "up": (cx, cy + dy, cx, cy - dy),
        "down": (cx, cy - dy, cx, cy + dy),
        "left": (cx + dx, cy, cx - dx, cy),
        "right": (cx - dx, cy, cx + dx, cy),
    }[direction]


def _reached(obs: Observation, el: Element, x: int, y: int) -> Target:
    """The target of a tap on element ``el`` at its point: the element, unless something else
    takes touches there (a text listed for reading that no tap can reach, over a sheet's dismiss
    area, say): then what the tap really lands on, as the hit test says (the record tells the truth)."""
    listed = target_for_element(el)
    reached = hit_test(obs.tree, x, y)
    if reached.label_source != "none" and (reached.bounds, reached.class_name) != (listed.bounds, listed.class_name):
        return reached
    return listed


def plan_action(call: ToolCall, obs: Observation, packages: list[str] | None = None,
                labels: Mapping[str, str] | None = None) -> PlannedAction:
    a = call.args
    name = call.name
    if name in ("tap", "long_press"):
        if "index" in a:
            el = _element(obs, a["index"])
            x, y = el.center
            return PlannedAction(name, dict(a), x, y, target=_reached(obs, el, x, y), element=el)
        x, y = _point(obs, a["x"], a["y"])
        return PlannedAction(name, dict(a), x, y, target=hit_test(obs.tree, x, y))
    if name == "swipe":
        if "direction" in a:
            if "index" in a:
                b = _element(obs, a["index"]).node.bounds
                box = (b.left, b.top, b.right, b.bottom)
            else:
                w, h = obs.space.width, obs.space.height
                box = (0, int(h * 0.15), w, int(h * 0.85))
            x1, y1, x2, y2 = _swipe_vector(a["direction"], box)
        else:
            x1, y1 = _point(obs, a["x1"], a["y1"])
            x2, y2 = _point(obs, a["x2"], a["y2"])
        return PlannedAction(
            name, dict(a), x1, y1, x2, y2, target=hit_test(obs.tree, x1, y1), target_end=hit_test(obs.tree, x2, y2)
        )
    if name == "type_text":
        field: Element | None = _element(obs, a["index"]) if "index" in a else obs.focused_element()
        target = Target()
        fx: int | None = None
        fy: int | None = None
        if field is not None:
            fx, fy = field.center
            target = target_for_element(field) if "index" in a else hit_test(obs.tree, fx, fy)
        planned = PlannedAction(name, dict(a), fx, fy, target=target, element=field)
        if target.password or (field is not None and field.node.password):
            planned.secret = a["text"]
            planned.args["text"] = REDACTED
            planned.args["redacted"] = True
        return planned
    if name == "launch_app":
        package, how = resolve_package(a["app"], packages or [], labels)
        return PlannedAction(name, {"app": a["app"], "package": package, "resolved_by": how})
    return PlannedAction(name, dict(a))


def resolve_package(app: str, packages: list[str], labels: Mapping[str, str] | None = None) -> tuple[str, str]:
    """The package ``app`` names (a package, or what a person calls it: "Messages", "Simple
    Calendar Pro") and how it resolved (``device.apps``). A miss raises ToolCallError naming the
    closest installed apps, so the model can choose one by package."""
    resolution = resolve_app(app, packages, labels)
    if resolution.package is None:
        raise ToolCallError(resolution.miss_message())
    return resolution.package, resolution.how


def execute(
    action: PlannedAction, device: Device, *, real_time: bool = True, pre: UITree | None = None,
    probe: Probe | None = None,
) -> ActionResult:
    """Perform the action. Device failures other than a dropped connection become results.

    ``pre`` is the UI tree the action was planned on; ``probe`` reads the screen in the
    middle of a type_text (after the focusing tap, before Enter): with it, text is typed only
    into a field that took focus (``operators.typing``). The result's ``ok`` here means the
    device took the action; ``outcome.assess`` decides what it came to.
    """
    t = action.type
    trace: TypingTrace | None = None
    try:
        if t == "tap":
            device.tap(action.x, action.y)  # type: ignore[arg-type]
        elif t == "long_press":
            device.long_press(action.x, action.y)  # type: ignore[arg-type]
        elif t == "swipe":
            device.swipe(action.x, action.y, action.x2, action.y2)  # type: ignore[arg-type]
        elif t == "type_text":
            status, detail, trace = type_into(action, device, pre=pre, probe=probe)
            if status != "ok":
                return ActionResult("failed", detail, trace)
        elif t == "press_key":
            device.key(action.args["key"])
        elif t == "launch_app":
            device.launch(action.args["package"])
        elif t == "wait":
            if real_time:
                time.sleep(float(action.args["seconds"]))
        elif t == "finish":
            return ActionResult("finished", action.args.get("answer", ""))
    except DeviceOffline:
        raise
    except DeviceError as exc:
        return ActionResult("error", f"{type(exc).__name__}: {exc}", trace)
    return ActionResult("ok", "", trace)
