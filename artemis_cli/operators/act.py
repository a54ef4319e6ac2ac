"""Turn a validated tool call into pixel-level device operations with element semantics.

``plan_action`` resolves indices and model coordinates against the observation the model saw
(raising ToolCallError — sent back to the model — for an index or point that does not exist);
``execute`` performs it. Every coordinate is enriched by hit testing before it is recorded,
swipe, scroll and drag ends included. ``scroll`` names the content's direction (``scroll down``
shows what is below: the finger moves up), ``swipe`` the finger's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.device.apps import resolve_app
from artemis_cli.device.intents import open_url, stop_app
from artemis_cli.device.protocol import Device
from artemis_cli.engine.records import ResultStatus
from artemis_cli.errors import DeviceError, DeviceOffline, ScreenshotError, ShellError
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.outcome import VISUAL_CHANGE_MIN
from artemis_cli.operators.secrets import secret_label
from artemis_cli.operators.tools import MAX_SCROLLS, ToolCall, ToolCallError
from artemis_cli.operators.typing import Probe, TypingTrace, type_into
from artemis_cli.perception.dhash import dhash_hex, hamming
from artemis_cli.perception.hittest import HitIndex, hit_test, target_for_element
from artemis_cli.perception.modal import blocking
from artemis_cli.perception.structure import is_edit, short_class
from artemis_cli.perception.types import Element, Target, UINode, UITree

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
    pre_dhash: str | None = None  # scroll to_end: the screen's dHash before the first swipe

    @property
    def recorded_args(self) -> dict[str, Any]:
        return dict(self.args)

    def phrase(self) -> str:
        """One-line description for progress output and ledgers."""
        t = self.target.describe() if self.target.label_source != "none" else ""
        if self.type in ("tap", "double_tap", "long_press"):
            return f"{self.type} {t or f'({self.x},{self.y})'}"
        if self.type == "scroll":
            inside = f" in {t}" if "index" in self.args and t else ""
            return f"scroll {self.args.get('direction')}{inside}" + (" to the end" if self.args.get("to_end") else "")
        if self.type == "drag":
            end = self.target_end.describe() if self.target_end and self.target_end.label_source != "none" else ""
            return f"drag {t or f'({self.x},{self.y})'} to {end or f'({self.x2},{self.y2})'}"
        if self.type == "swipe":
            d = self.args.get("direction")
            return f"swipe {d}" if d else f"swipe ({self.x},{self.y})->({self.x2},{self.y2})"
        if self.type == "type_text":
            return f"type {self.args.get('text')!r}" + (f" into {t}" if t else "")
        if self.type == "press_key":
            return f"press {self.args.get('key')}"
        if self.type == "launch_app":
            return f"launch {self.args.get('package') or self.args.get('app')}"
        if self.type == "open_url":
            return f"open {self.args.get('url')}"
        if self.type == "stop_app":
            return f"stop {self.args.get('package') or self.args.get('app')}"
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
    #: scroll to_end: swipes made, and whether the content stopped moving within MAX_SCROLLS (None:
    #: a screenshot failed, so nobody saw)
    swipes: int | None = None
    at_end: bool | None = None


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


#: scroll: the finger moves against the content (``scroll down`` = the finger moves up)
_FINGER = {"down": "up", "up": "down", "right": "left", "left": "right"}


def _box(obs: Observation, index: int | None, *, largest_scrollable: bool) -> tuple[int, int, int, int]:
    """Where a directional swipe or scroll moves: inside element ``index``; else (a scroll) the
    largest scrollable element listed; else the screen's middle, between the app bar and the
    navigation area."""
    if index is not None:
        b = _element(obs, index).node.bounds
        return (b.left, b.top, b.right, b.bottom)
    scrollable = [e.node.bounds for e in obs.elements if e.node.scrollable] if largest_scrollable else []
    if scrollable:
        b = max(scrollable, key=lambda r: r.area)
        return (b.left, b.top, b.right, b.bottom)
    w, h = obs.space.width, obs.space.height
    return (0, int(h * 0.15), w, int(h * 0.85))


def _end(obs: Observation, a: dict[str, Any], index_key: str, x_key: str, y_key: str) -> tuple[int, int, Target]:
    """One end of a drag: the element's point (what it reaches there) or the point's hit test."""
    if index_key in a:
        el = _element(obs, a[index_key])
        x, y = el.center
        return x, y, _reached(obs, el, x, y)
    x, y = _point(obs, a[x_key], a[y_key])
    return x, y, hit_test(obs.tree, x, y)


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
                labels: Mapping[str, str] | None = None,
                launchable: Callable[[], list[str] | None] | None = None,
                secrets: Mapping[str, str] | None = None) -> PlannedAction:
    """The device operation ``call`` means on ``obs``; ``packages`` (installed), ``labels`` and
    ``launchable`` (the packages with a launcher activity, read only when a launch_app name
    misses) resolve a launch_app; ``secrets`` (the task's values by name) a type_text ``secret``."""
    planned = _plan(call, obs, packages, labels, launchable, secrets)
    if planned.type in _TOUCHES and planned.x is not None and planned.y is not None:
        _refuse_behind_modal(obs, planned.x, planned.y)
    return planned


#: actions whose touch starts at (x, y): the window there takes it (a type_text taps its field)
_TOUCHES = ("tap", "double_tap", "long_press", "swipe", "scroll", "drag", "type_text")


def _refuse_behind_modal(obs: Observation, x: int, y: int) -> None:
    """A touch that would start outside the modal window in front (a dialog: ``perception.modal``)
    is refused before anything is sent: on the phone it would close the dialog or do nothing."""
    modal = blocking(HitIndex.of(obs.tree), x, y)
    if modal is not None:
        raise ToolCallError(f"{modal.name} is in front; dismiss it or use its buttons (press_key back closes "
                            "most dialogs); nothing was sent")


def _plan(call: ToolCall, obs: Observation, packages: list[str] | None,
          labels: Mapping[str, str] | None,
          launchable: Callable[[], list[str] | None] | None,
          secrets: Mapping[str, str] | None = None) -> PlannedAction:
    a = call.args
    name = call.name
    if name == "scroll":
        x1, y1, x2, y2 = _swipe_vector(_FINGER[a["direction"]], _box(obs, a.get("index"), largest_scrollable=True))
        return PlannedAction(
            name, dict(a), x1, y1, x2, y2, target=hit_test(obs.tree, x1, y1), target_end=hit_test(obs.tree, x2, y2),
            pre_dhash=obs.dhash if a.get("to_end") else None,
        )
    if name == "drag":
        x1, y1, t1 = _end(obs, a, "index", "x1", "y1")
        x2, y2, t2 = _end(obs, a, "to_index", "x2", "y2")
        return PlannedAction(name, dict(a), x1, y1, x2, y2, target=t1, target_end=t2)
    if name in ("tap", "double_tap", "long_press"):
        if "index" in a:
            el = _element(obs, a["index"])
            x, y = el.center
            return PlannedAction(name, dict(a), x, y, target=_reached(obs, el, x, y), element=el)
        x, y = _point(obs, a["x"], a["y"])
        return PlannedAction(name, dict(a), x, y, target=hit_test(obs.tree, x, y))
    if name == "swipe":
        if "direction" in a:
            box = _box(obs, a.get("index"), largest_scrollable=False)
            x1, y1, x2, y2 = _swipe_vector(a["direction"], box)
        else:
            x1, y1 = _point(obs, a["x1"], a["y1"])
            x2, y2 = _point(obs, a["x2"], a["y2"])
        return PlannedAction(
            name, dict(a), x1, y1, x2, y2, target=hit_test(obs.tree, x1, y1), target_end=hit_test(obs.tree, x2, y2)
        )
    if name == "type_text":
        field: Element | None = _element(obs, a["index"]) if "index" in a else obs.focused_element()
        if "index" in a and field is not None:
            _refuse_non_field(obs, field)
        target = Target()
        fx: int | None = None
        fy: int | None = None
        if field is not None:
            fx, fy = field.center
            target = target_for_element(field) if "index" in a else hit_test(obs.tree, fx, fy)
        planned = PlannedAction(name, dict(a), fx, fy, target=target, element=field)
        if "secret" in a:
            _type_secret(planned, a["secret"], secrets or {})
        elif target.password or (field is not None and field.node.password):
            planned.secret = a["text"]
            planned.args["text"] = REDACTED
            planned.args["redacted"] = True
        return planned
    if name in ("launch_app", "stop_app"):
        package, how = resolve_package(a["app"], packages or [], labels, launchable)
        return PlannedAction(name, {"app": a["app"], "package": package, "resolved_by": how})
    return PlannedAction(name, dict(a))


def _type_secret(planned: PlannedAction, name: str, secrets: Mapping[str, str]) -> None:
    """A type_text of the task's secret ``name``: the value goes to the device only; the recorded
    args name the secret (``text`` is its label), never its value. Only into a password field: any
    other shows what it holds, and the next element list would carry the value to the model."""
    if name not in secrets:
        known = ", ".join(sorted(secrets))
        raise ToolCallError(f"no secret named {name[:60]!r}; " + (
            f"this task's secrets are: {known}" if known else "this task has no secrets: type the text itself"))
    field = planned.element
    if field is None:
        raise ToolCallError(f"no field is focused to type secret {name} into; give the password field's index; "
                            "nothing was sent")
    if not (planned.target.password or field.node.password):
        where = f"[{field.index}]" if "index" in planned.args else "the focused field"
        raise ToolCallError(f"{where} is not a password field (a secret is typed only where the screen hides "
                            "it); nothing was sent. Give the index of the field flagged password")
    planned.secret = secrets[name]
    planned.args = {"text": secret_label(name), "secret": name,
                    **{k: v for k, v in planned.args.items() if k not in ("text", "secret")}, "redacted": True}


def _takes_text(node: UINode) -> bool:
    """Whether typing into ``node`` can work: a text field, one whose class says so (a search
    box's ``SearchAutoComplete``), the view that has the input focus, or a bare ``View`` (web,
    Flutter or game content whose dump may not name its fields)."""
    short = short_class(node.class_name)
    return (is_edit(node) or "EditText" in short or "AutoComplete" in short or node.focused
            or node.class_name == "android.view.View")


def _refuse_non_field(obs: Observation, field: Element) -> None:
    """A type_text aimed at an element that is no text field and holds none (a row, a label, a
    button) is refused before anything is sent: tapping it would open what it opens."""
    node = field.node
    if _takes_text(node):
        return
    inside = node.path + "."
    if any(n.path.startswith(inside) and _takes_text(n) for n in obs.tree.nodes):
        return  # a field inside it (a text input layout): the tap focuses it
    kind = short_class(node.class_name) or "element"
    raise ToolCallError(f"[{field.index}] is a {kind}, not a text field; nothing was sent. Give type_text "
                        "the index of a field (edit among its flags), or tap this element if you meant to open it")


def resolve_package(app: str, packages: list[str], labels: Mapping[str, str] | None = None,
                    launchable: Callable[[], list[str] | None] | None = None) -> tuple[str, str]:
    """The package ``app`` names (a package, or what a person calls it: "Messages", "Simple
    Calendar Pro") and how it resolved (``device.apps``). A miss raises ToolCallError naming the
    launchable apps with a similar name, else the launchable apps, so the model can choose one by
    package."""
    resolution = resolve_app(app, packages, labels)
    if resolution.package is None:
        if launchable is not None:
            resolution = resolve_app(app, packages, labels, launchable=launchable())
        raise ToolCallError(resolution.miss_message())
    return resolution.package, resolution.how


def _scroll_to_end(action: PlannedAction, device: Device) -> ActionResult:
    """Swipe until two screenshots in a row have the same dHash, give or take what counts as no
    visible change (a lossy capture's noise), at most MAX_SCROLLS times. The first swipe is
    compared with the screen the action was planned on. A screenshot that fails ends the scrolling
    (``at_end`` None: nobody saw where the content stopped)."""
    last = action.pre_dhash
    for n in range(1, MAX_SCROLLS + 1):
        device.swipe(action.x, action.y, action.x2, action.y2)  # type: ignore[arg-type]
        try:
            now = dhash_hex(device.screenshot())
        except ScreenshotError as exc:
            return ActionResult("ok", f"scrolled {n} time(s); then the screen could not be watched ({exc})", swipes=n)
        if last is not None and hamming(now, last) < VISUAL_CHANGE_MIN:
            moved = n - 1
            return ActionResult("ok", f"scrolled {moved} time(s); the content stopped moving", swipes=n, at_end=True)
        last = now
    return ActionResult("ok", f"scrolled {MAX_SCROLLS} times; the content was still moving", swipes=MAX_SCROLLS,
                        at_end=False)


def execute(
    action: PlannedAction, device: Device, *, real_time: bool = True, pre: UITree | None = None,
    probe: Probe | None = None, sleep: Callable[[float], None] = time.sleep,
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
        elif t == "double_tap":
            device.double_tap(action.x, action.y)  # type: ignore[arg-type]
        elif t == "drag":
            device.drag(action.x, action.y, action.x2, action.y2)  # type: ignore[arg-type]
        elif t == "scroll":
            if action.args.get("to_end"):
                return _scroll_to_end(action, device)
            device.swipe(action.x, action.y, action.x2, action.y2)  # type: ignore[arg-type]
        elif t == "type_text":
            status, detail, trace = type_into(action, device, pre=pre, probe=probe)
            if status != "ok":
                return ActionResult("failed", detail, trace)
        elif t == "press_key":
            device.key(action.args["key"])
        elif t == "launch_app":
            device.launch(action.args["package"])
        elif t == "open_url":
            try:
                open_url(device, action.args["url"])
            except ShellError as exc:  # nothing handles it: the model's to correct, not the phone's
                return ActionResult("failed", str(exc))
        elif t == "stop_app":
            if not stop_app(device, action.args["package"]):
                return ActionResult("failed", f"{action.args['package']} still runs after a force-stop")
        elif t == "wait":
            if real_time:  # ``sleep`` may return early: a stop cuts a wait short, never a sent action
                sleep(float(action.args["seconds"]))
        elif t == "finish":
            return ActionResult("finished", action.args.get("answer", ""))
    except DeviceOffline:
        raise
    except DeviceError as exc:
        return ActionResult("error", f"{type(exc).__name__}: {exc}", trace)
    return ActionResult("ok", "", trace)
