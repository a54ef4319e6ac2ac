"""``type_text`` on a device: focus the field, make sure it took focus, clear, type, check.

Typed text lands or the step says it did not (SPEC §15 "Action outcomes"):

* after the focusing tap the screen is probed again (the UI dump only): when a new window
  appeared (a pop-up, a dialog) or another field took focus, nothing is typed and the step
  fails saying so — typing blindly into a pop-up loses the text, or worse, types into the wrong
  place;
* clearing is the backend's own clear in one device operation (``Device.clear_text``: u2's
  clear, adb's move-to-end plus deletes in one ``input keyevent``), sized by what the field
  shows in the probe, never key presses one round trip each;
* with ``submit`` the field is checked before Enter is pressed: text that did not land is not
  submitted;
* otherwise ``outcome.assess`` checks the field in the step's post observation.

Without a probe (replay, recovery actions) the field is focused, cleared and typed into as
asked, unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from artemis_cli.device.protocol import Device
from artemis_cli.errors import HierarchyError, HierarchyParseError
from artemis_cli.operators.outcome import (
    field_label,
    field_text,
    find_field,
    landing_problem,
    opened_windows,
    window_phrase,
)
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.structure import is_edit
from artemis_cli.perception.types import Target, UINode, UITree

__all__ = ["Probe", "TypingTrace", "focus_problem", "probe_tree", "type_into"]

#: Reads the device's current UI tree; None when it cannot be read (then typing goes unchecked).
Probe = Callable[[], "UITree | None"]


@dataclass
class TypingTrace:
    """What typing saw of its field; read by ``outcome.assess``. Never stored: ``text`` is what
    was typed, a password's real text included."""

    target: Target
    before: str
    text: str
    cleared: bool = False
    submitted: bool = False
    #: The field was checked before Enter was pressed (``submit``); ``problem``/``node`` say how.
    verified: bool = False
    problem: str | None = None
    node: UINode | None = None
    #: ``text`` is a password's: no outcome ever quotes the field it went into.
    secret: bool = False


def probe_tree(device: Device, screen: tuple[int, int], retries: int = 2) -> UITree | None:
    """The current UI tree from one dump (a failed dump is retried ``retries`` times)."""
    for _ in range(retries + 1):
        try:
            tree = parse_hierarchy(device.hierarchy(), screen_size=screen)
        except (HierarchyError, HierarchyParseError):
            continue
        if tree.nodes:
            return tree
    return None


#: How a type_text that sent no text says so (its detail); then only the focusing tap, if any, ran.
NOTHING_TYPED = "nothing was typed"


def focus_problem(pre: UITree | None, now: UITree, target: Target) -> tuple[str | None, UINode | None]:
    """(why typing now would miss the field, the field's node) after the focusing tap."""
    node = find_field(now, target, focused=False)
    opened = opened_windows(pre, now)
    if node is not None and node.focused:
        # a window beside the field (suggestions under a search box) is no reason to stop; one
        # over it takes the keys even when the dump still calls the field focused
        over = [w for w in opened if w.covers(node)]
        if not over:
            return None, node
        return (f"a new window appeared over the field after the focusing tap: {window_phrase(over[-1])}; "
                + NOTHING_TYPED), node
    if opened:
        return (f"a new window appeared after the focusing tap: {window_phrase(opened[-1])}; "
                + NOTHING_TYPED), node
    other = next((n for n in now.nodes if n.focused and is_edit(n)), None)
    if other is not None:
        return f"the tap focused another field, {field_label(other)}; {NOTHING_TYPED}", node
    if node is None:
        return f"the field is no longer on the screen after the focusing tap; {NOTHING_TYPED}", None
    if not is_edit(node) and not any(n.focused for n in now.nodes):
        return None, node  # not a text field the dump tracks focus for (web content): type, then check
    return f"{field_label(node)} did not take focus; {NOTHING_TYPED}", node


def type_into(action: object, device: Device, *, pre: UITree | None, probe: Probe | None) -> tuple[str, str, TypingTrace]:
    """Run a planned type_text; (status, detail, trace). Device errors propagate to ``execute``."""
    args = action.args  # type: ignore[attr-defined]
    target: Target = action.target  # type: ignore[attr-defined]
    secret = action.secret  # type: ignore[attr-defined]
    text = secret if secret is not None else str(args.get("text", ""))
    node = find_field(pre, target) if pre is not None else None
    trace = TypingTrace(target, field_text(node) if node is not None else target.text, text,
                        secret=secret is not None)
    x, y = action.x, action.y  # type: ignore[attr-defined]
    if "index" in args and x is not None and y is not None:
        device.tap(x, y)
        now = probe() if probe is not None else None
        if now is not None:
            problem, node = focus_problem(pre, now, target)
            if problem is not None:
                return "failed", problem, trace
            if node is not None:
                trace.before = field_text(node)
    elif probe is not None and node is None and target.label_source == "none":
        return "failed", f"no text field is focused; {NOTHING_TYPED} (give the field's index)", trace
    if args.get("clear"):
        device.clear_text(len(node.text) if node is not None else len(target.text))
        trace.cleared = True
    if text:
        device.type_text(text)
    if args.get("submit"):
        now = probe() if probe is not None else None
        if now is not None:
            trace.node = find_field(now, target)
            trace.problem = landing_problem(trace.before, text, trace.node, cleared=trace.cleared,
                                            secret=trace.secret)
            trace.verified = True
            if trace.problem is not None:
                return "failed", trace.problem + "; Enter was not pressed", trace
        device.key("enter")
        trace.submitted = True
    return "ok", "", trace
