"""uiautomator2's ``Selector`` (the JSON its ``d(text=…)`` sends) matched against the sim's windows.

A selector is ``{"mask": BITS, "text": …, "childOrSibling": ["child"|"sibling", …],
"childOrSiblingSelector": [selector, …]}``; only fields whose bit is set in ``mask`` count (as in
the server's ``Selector.toUiSelector``).  Matching follows ``UiSelector``: ``text`` /
``description`` / ``className`` / ``resourceId`` / ``packageName`` are exact, ``…Contains`` /
``…StartsWith`` are substrings, ``…Matches`` are Java-style whole-string regexes, the booleans
compare the node's flags, ``index`` is the node's position among its siblings and ``instance``
picks the n-th match in document order.  Nodes are exactly what the window dump shows (same
text, same clipped bounds), in the dump's order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from artemis_cli.sim.widgets import Widget, Window


class SelectorError(Exception):
    """A selector that cannot be evaluated (a bad regex): ``java_class`` is what Java would throw."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(message)
        self.java_class = java_class
        self.message = message


@dataclass(eq=False)
class Node:
    widget: Widget
    package: str
    index: int  # position among its siblings (top-level windows: 0, like the dump)
    parent: Node | None
    order: int  # position in the dump

    def descendants(self, nodes: list[Node]) -> list[Node]:
        out = []
        for n in nodes[self.order + 1:]:
            p = n.parent
            while p is not None and p is not self:
                p = p.parent
            if p is None:
                break  # document order: the subtree is contiguous
            out.append(n)
        return out


def flatten(windows: list[Window]) -> list[Node]:
    nodes: list[Node] = []

    def add(w: Widget, package: str, index: int, parent: Node | None) -> None:
        node = Node(w, package, index, parent, len(nodes))
        nodes.append(node)
        for i, child in enumerate(w.children):
            add(child, package, i, node)

    for win in windows:
        add(win.root, win.package, 0, None)
    return nodes


def _full(pattern: str) -> Callable[[str], bool]:
    try:
        rx = re.compile(pattern)
    except re.error as e:
        raise SelectorError("java.util.regex.PatternSyntaxException", f"{e} near index {e.pos}\n{pattern}") from e
    return lambda value: rx.fullmatch(value) is not None


# mask bit, UiSelector's name for it, how to test a node
_STR: dict[str, tuple[int, str, Callable[[Node], str], str]] = {
    "text": (0x01, "TEXT", lambda n: n.widget.text, "eq"),
    "textContains": (0x02, "CONTAINS_TEXT", lambda n: n.widget.text, "in"),
    "textMatches": (0x04, "PATTERN_TEXT", lambda n: n.widget.text, "re"),
    "textStartsWith": (0x08, "START_TEXT", lambda n: n.widget.text, "start"),
    "className": (0x10, "CLASS", lambda n: n.widget.cls, "eq"),
    "classNameMatches": (0x20, "CLASS_REGEX", lambda n: n.widget.cls, "re"),
    "description": (0x40, "DESCRIPTION", lambda n: n.widget.desc, "eq"),
    "descriptionContains": (0x80, "CONTAINS_DESCRIPTION", lambda n: n.widget.desc, "in"),
    "descriptionMatches": (0x0100, "PATTERN_DESCRIPTION", lambda n: n.widget.desc, "re"),
    "descriptionStartsWith": (0x0200, "START_DESCRIPTION", lambda n: n.widget.desc, "start"),
    "packageName": (0x080000, "PACKAGE_NAME", lambda n: n.package, "eq"),
    "packageNameMatches": (0x100000, "PACKAGE_NAME_REGEX", lambda n: n.package, "re"),
    "resourceId": (0x200000, "RESOURCE_ID", lambda n: n.widget.rid, "eq"),
    "resourceIdMatches": (0x400000, "RESOURCE_ID_REGEX", lambda n: n.widget.rid, "re"),
}
_BOOL: dict[str, tuple[int, str, Callable[[Widget], bool]]] = {
    "checkable": (0x0400, "CHECKABLE", lambda w: w.checkable),
    "checked": (0x0800, "CHECKED", lambda w: w.checked),
    "clickable": (0x1000, "CLICKABLE", lambda w: w.clickable),
    "longClickable": (0x2000, "LONG_CLICKABLE", lambda w: w.long_clickable),
    "scrollable": (0x4000, "SCROLLABLE", lambda w: w.scrollable),
    "enabled": (0x8000, "ENABLED", lambda w: w.enabled),
    "focusable": (0x010000, "FOCUSABLE", lambda w: w.focusable),
    "focused": (0x020000, "FOCUSED", lambda w: w.focused),
    "selected": (0x040000, "SELECTED", lambda w: w.selected),
}
MASK_INDEX, MASK_INSTANCE = 0x800000, 0x01000000


def _mask(sel: dict[str, Any]) -> int:
    try:
        return int(sel.get("mask", 0))
    except (TypeError, ValueError):
        return 0


def _string_test(get: Callable[[Node], str], how: str, want: str) -> Callable[[Node], bool]:
    if how == "eq":
        return lambda n: get(n) == want
    if how == "in":
        return lambda n: want in get(n)
    if how == "start":
        return lambda n: get(n).startswith(want)
    rx = _full(want)
    return lambda n: rx(get(n))


def _flag_test(flag: Callable[[Widget], bool], want: bool) -> Callable[[Node], bool]:
    return lambda n: flag(n.widget) == want


def _criteria(sel: dict[str, Any]) -> list[Callable[[Node], bool]]:
    mask = _mask(sel)
    tests = [_string_test(get, how, str(sel.get(key) or ""))
             for key, (bit, _, get, how) in _STR.items() if mask & bit]
    tests += [_flag_test(flag, bool(sel.get(key))) for key, (bit, _, flag) in _BOOL.items() if mask & bit]
    if mask & MASK_INDEX:
        index = _int(sel.get("index"))
        tests.append(lambda n: n.index == index)
    return tests


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _pick(sel: dict[str, Any], found: list[Node]) -> list[Node]:
    if _mask(sel) & MASK_INSTANCE:
        i = _int(sel.get("instance"))
        return [found[i]] if 0 <= i < len(found) else []
    return found


def select(windows: list[Window], sel: dict[str, Any]) -> list[Node]:
    """Every node ``sel`` matches, in document order (one at most when it has an instance)."""
    nodes = flatten(windows)
    tests = _criteria(sel)
    found = _pick(sel, [n for n in nodes if all(t(n) for t in tests)])
    kinds = sel.get("childOrSibling") or []
    subs = sel.get("childOrSiblingSelector") or []
    for kind, sub in zip(kinds, subs, strict=False):
        if not isinstance(sub, dict):
            continue
        sub_tests = _criteria(sub)
        seen: set[int] = set()
        nxt: list[Node] = []
        for n in found:
            base = n if str(kind).lower() == "child" else n.parent
            pool = base.descendants(nodes) if base is not None else nodes
            for d in pool:
                if d.order not in seen and all(t(d) for t in sub_tests):
                    seen.add(d.order)
                    nxt.append(d)
        found = _pick(sub, sorted(nxt, key=lambda n: n.order))
    return found


def describe(sel: dict[str, Any]) -> str:
    """``UiSelector[TEXT=New note, INSTANCE=1]`` like the Java UiSelector's toString."""
    mask = _mask(sel)
    parts = [f"{name}={sel.get(key)}" for key, (bit, name, _, _) in _STR.items() if mask & bit]
    parts += [f"{name}={str(bool(sel.get(key))).lower()}" for key, (bit, name, _) in _BOOL.items() if mask & bit]
    if mask & MASK_INDEX:
        parts.append(f"INDEX={_int(sel.get('index'))}")
    if mask & MASK_INSTANCE:
        parts.append(f"INSTANCE={_int(sel.get('instance'))}")
    for kind, sub in zip(sel.get("childOrSibling") or [], sel.get("childOrSiblingSelector") or [], strict=False):
        if isinstance(sub, dict):
            parts.append(f"{'CHILD' if str(kind).lower() == 'child' else 'PARENT'}={describe(sub)}")
    return "UiSelector[" + ", ".join(parts) + "]"


def rect(b: tuple[int, int, int, int]) -> dict[str, int]:
    return {"left": b[0], "top": b[1], "right": b[2], "bottom": b[3]}


def obj_info(node: Node) -> dict[str, Any]:
    """The server's ObjInfo: what UiObject2 reports (null for an empty text/description/id)."""
    w = node.widget
    return {"bounds": rect(w.bounds), "visibleBounds": rect(w.bounds), "childCount": len(w.children),
            "className": w.cls, "contentDescription": w.desc or None, "packageName": node.package,
            "resourceName": w.rid or None, "text": w.text or None, "checkable": w.checkable,
            "checked": w.checked, "clickable": w.clickable, "enabled": w.enabled, "focusable": w.focusable,
            "focused": w.focused, "longClickable": w.long_clickable, "scrollable": w.scrollable,
            "selected": w.selected}
