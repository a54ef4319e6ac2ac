"""The uiautomator2 server's UiObject / UiScrollable JSON-RPC methods (what ``d(text=…)`` calls).

``d(text="New note").click()`` sends ``waitForExists(sel, ms)``, ``objInfo(sel)`` and then
``click(x, y)`` at the centre of the visible bounds; ``.exists`` is ``exist(sel)``, ``.get_text()``
is ``getText(sel)``, ``.set_text(s)`` is ``setText(sel, s)`` (``clearTextField(sel)`` for "").
Actions go through the phone's own input paths: a click is ``do_tap`` at the centre (so a
keyboard, a dialog or the pop-up in the way gets the tap, as on a phone); ``setText`` taps the
field and then sets its text the way ACTION_SET_TEXT does (replacing it, no IME, no Enter).
A selector that matches nothing raises UiObjectNotFoundException, the way the server reports it:
``{"code": -32001, "message": "androidx.test.uiautomator.UiObjectNotFoundException",
"data": "UiSelector[TEXT=…]"}``.  Waits poll the screen without holding the phone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from artemis_cli.sim.adbd.device_shell import DeviceSide
from artemis_cli.sim.adbd.u2_selector import (
    MASK_INSTANCE,
    Node,
    SelectorError,
    describe,
    flatten,
    obj_info,
    select,
)

NOT_FOUND = "androidx.test.uiautomator.UiObjectNotFoundException"
POLL_S = 0.05
SWIPE_MARGIN = 5  # px kept from the edges by UiObject.swipeUp/Down/Left/Right
DEADZONE = 0.1  # UiScrollable swipes inside the middle 80 % of the scrollable
MAX_SEARCH_SWIPES = 30  # UiScrollable's default
FLING_STEPS = 5  # UiScrollable.FLING_STEPS


class ServerError(Exception):
    """A Java exception the server reports as a JSON-RPC error."""

    def __init__(self, java_class: str, data: str, code: int = -32001) -> None:
        super().__init__(f"{java_class}: {data}")
        self.code = code
        self.java_class = java_class
        self.data = data


def _selector(sel: Any) -> dict[str, Any]:
    if not isinstance(sel, dict):
        raise ServerError("java.lang.IllegalArgumentException", f"not a selector: {sel!r}", -32602)
    return sel


class UiObjects:
    def __init__(self, device: DeviceSide) -> None:
        self.device = device
        # childByText/childByDescription/childByInstance hand out object names (the server's
        # addUiObject); the other methods accept such a name where a selector goes
        self.named: dict[str, tuple[dict[str, Any], dict[str, Any], str, Any]] = {}

    def methods(self) -> dict[str, Callable[..., Any]]:
        return {"exist": self.exist, "waitForExists": self.wait_for_exists, "waitUntilGone": self.wait_until_gone,
                "count": self.count, "objInfo": self.obj_info, "objInfoOfAllInstances": self.obj_info_all,
                "getText": self.get_text, "setText": self.set_text, "clearTextField": self.clear_text_field,
                "longClick": self.long_click, "scrollForward": self.scroll_forward,
                "scrollBackward": self.scroll_backward, "scrollToBeginning": self.scroll_to_beginning,
                "scrollToEnd": self.scroll_to_end, "scrollTo": self.scroll_to,
                "flingForward": self.fling_forward, "flingBackward": self.fling_backward,
                "flingToBeginning": self.fling_to_beginning, "flingToEnd": self.fling_to_end,
                "childByText": self.child_by_text, "childByDescription": self.child_by_description,
                "childByInstance": self.child_by_instance, "dragTo": self.drag_to, "pinchIn": self.pinch, "pinchOut": self.pinch, "gesture": self.gesture}

    # --- finding --------------------------------------------------------------------------
    def find(self, sel: Any) -> list[Node]:
        if isinstance(sel, str):
            return self._resolve(sel)
        sel = _selector(sel)
        with self.device.lock:
            try:
                return select(self.device.phone.windows(), sel)
            except SelectorError as e:
                raise ServerError(e.java_class, e.message) from e

    def one(self, sel: Any) -> Node:
        found = self.find(sel)
        if not found:
            raise ServerError(NOT_FOUND, sel if isinstance(sel, str) else describe(_selector(sel)))
        return found[0]

    # --- child objects (UiCollection / UiScrollable getChildBy…) ----------------------------
    def _child(self, how: str, coll: Any, child: Any, key: Any, allow_scroll: Any = True) -> str:
        coll, child = _selector(coll), _selector(child)
        if how != "instance" and allow_scroll is not False and any(n.widget.scrollable for n in self.find(coll)):
            target = {"mask": 0x01, "text": str(key)} if how == "text" else {"mask": 0x40, "description": str(key)}
            self.scroll_to(coll, target)  # UiScrollable.getChildByText scrolls it into view first
        name = f"{how}:{len(self.named) + 1}"
        self.named[name] = (coll, child, how, key)
        if not self._resolve(name):
            del self.named[name]
            raise ServerError(NOT_FOUND, f"{describe(child)} with {how} {key!r} in {describe(coll)}")
        return name

    def child_by_text(self, coll: Any, child: Any, text: Any, allow_scroll: Any = True) -> str:
        return self._child("text", coll, child, text, allow_scroll)

    def child_by_description(self, coll: Any, child: Any, desc: Any, allow_scroll: Any = True) -> str:
        return self._child("description", coll, child, desc, allow_scroll)

    def child_by_instance(self, coll: Any, child: Any, instance: Any) -> str:
        return self._child("instance", coll, child, instance)

    def _resolve(self, name: str) -> list[Node]:
        """The node an object name stands for, found again on the current screen (a UiObject is a
        selector, not a view): the first child of the collection matching the child selector whose
        subtree has that text / description, or its n-th match."""
        spec = self.named.get(name)
        if spec is None:
            raise ServerError(NOT_FOUND, f"UiObject {name} not found")
        coll, child, how, key = spec
        with self.device.lock:  # one screen: every node below comes from this flattening
            nodes = flatten(self.device.phone.windows())
            parents = self.find(coll)
            if not parents:
                return []
            inside_coll = {d.order for d in nodes[parents[0].order].descendants(nodes)}
            plain = {**child, "mask": int(child.get("mask") or 0) & ~MASK_INSTANCE}
            found = [nodes[n.order] for n in self.find(plain) if n.order in inside_coll]
        if how == "instance":
            i = int(key) if str(key).lstrip("-").isdigit() else -1
            return [found[i]] if 0 <= i < len(found) else []
        for n in found:
            if any((d.widget.text if how == "text" else d.widget.desc) == str(key)
                   for d in [n, *n.descendants(nodes)]):
                return [n]
        return []

    def _wait(self, sel: Any, timeout_ms: Any, present: bool) -> bool:
        deadline = time.monotonic() + max(0.0, float(timeout_ms or 0)) / 1000.0
        while True:
            if bool(self.find(sel)) == present:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)

    def exist(self, sel: Any) -> bool:
        return bool(self.find(sel))

    def wait_for_exists(self, sel: Any, timeout: Any = 0) -> bool:
        return self._wait(sel, timeout, True)

    def wait_until_gone(self, sel: Any, timeout: Any = 0) -> bool:
        return self._wait(sel, timeout, False)

    def count(self, sel: Any) -> int:
        return len(self.find(sel))

    def obj_info(self, sel: Any) -> dict[str, Any]:
        return obj_info(self.one(sel))

    def obj_info_all(self, sel: Any) -> list[dict[str, Any]]:
        return [obj_info(n) for n in self.find(sel)]

    def get_text(self, sel: Any) -> str | None:
        return self.one(sel).widget.text or None

    # --- acting ---------------------------------------------------------------------------
    @staticmethod
    def _point(node: Node, corner: Any) -> tuple[int, int]:
        left, top, right, bottom = node.widget.bounds
        where = str(corner or "center").lower()
        if where in ("br", "bottomright"):
            return right - SWIPE_MARGIN, bottom - SWIPE_MARGIN
        if where in ("tl", "topleft"):
            return left + SWIPE_MARGIN, top + SWIPE_MARGIN
        return (left + right) // 2, (top + bottom) // 2

    def click(self, sel: Any, corner: Any = None) -> bool:
        with self.device.lock:
            x, y = self._point(self.one(sel), corner)
            self.device.phone.do_tap(x, y)
        return True

    def long_click(self, sel: Any, corner: Any = None) -> bool:
        with self.device.lock:
            x, y = self._point(self.one(sel), corner)
            self.device.phone.do_long_press(x, y)
        return True

    def set_text(self, sel: Any, text: Any) -> bool:
        """UiObject2.click() then setText(): a real tap on the field, then its text replaced."""
        value = "" if text is None else str(text)
        phone = self.device.phone
        with self.device.lock:
            node = self.one(sel)
            with phone.one_action():
                phone.do_tap(*self._point(node, None))
                self._replace(node, value)
        return True

    def clear_text_field(self, sel: Any) -> None:
        """UiObject2.clear(): ACTION_SET_TEXT with "" (no tap)."""
        with self.device.lock:
            self._replace(self.one(sel), "")

    def _replace(self, node: Node, value: str) -> None:
        """ACTION_SET_TEXT on an editable node (ignored by anything else, as on Android)."""
        phone = self.device.phone
        key = node.widget.field_key
        app = phone.apps.get(node.package)
        if key is None or app is None or not node.widget.enabled:
            phone.note_ignored(f"setText on {node.widget.cls}: not an editable field")
            return
        st = app.ui_state
        st.fields[key] = "".join(ch for ch in value if ch in "\n\t" or ord(ch) >= 32).replace("\t", " ")
        st.replace_next = False
        phone.invalidate()

    def swipe(self, sel: Any, direction: Any, *rest: Any) -> bool:
        """UiObject.swipeUp/Down/Left/Right(steps) inside the object's visible bounds."""
        steps = int(rest[-1]) if rest else 10
        with self.device.lock:
            left, top, right, bottom = self.one(sel).widget.bounds
            cx, cy = (left + right) // 2, (top + bottom) // 2
            d = str(direction).lower()[:1]
            x1, y1, x2, y2 = {"u": (cx, bottom - SWIPE_MARGIN, cx, top + SWIPE_MARGIN),
                              "d": (cx, top + SWIPE_MARGIN, cx, bottom - SWIPE_MARGIN),
                              "l": (right - SWIPE_MARGIN, cy, left + SWIPE_MARGIN, cy),
                              "r": (left + SWIPE_MARGIN, cy, right - SWIPE_MARGIN, cy)}.get(d, (cx, cy, cx, cy))
            if (x1, y1) == (x2, y2):
                return False
            self.device.phone.do_swipe(x1, y1, x2, y2, steps * 5)
        return True

    def drag_to(self, sel: Any, *args: Any) -> bool:
        """UiObject.dragTo(x, y, steps) or dragTo(UiObject, steps): press the object's centre,
        hold past the long-press timeout, move, release (what reorders a list)."""
        with self.device.lock:
            x1, y1 = self._point(self.one(sel), None)
            if args and isinstance(args[0], dict):
                x2, y2 = self._point(self.one(args[0]), None)
            elif len(args) >= 2:
                x2, y2 = int(args[0]), int(args[1])
            else:
                raise ServerError("java.lang.IllegalArgumentException", "dragTo needs a point or an object", -32602)
            self.device.phone.do_drag(x1, y1, x2, y2)
        return True

    def pinch(self, sel: Any, percent: Any = 100, steps: Any = 50) -> bool:
        """UiObject.pinchIn/pinchOut: a two-finger gesture inside the object.  Nothing in the
        sim's apps zooms, so it changes nothing, as on a phone's list or form (still an object
        that must exist, and still an action)."""
        return self.gesture(sel)

    def gesture(self, sel: Any, *_: Any) -> bool:
        """UiObject.performTwoPointerGesture: accepted inside the object; no app zooms."""
        with self.device.lock:
            node = self.one(sel)
            self.device.phone.note_ignored(f"two-finger gesture on {node.widget.cls}: nothing zooms")
            self.device.phone.invalidate()
        return True

    # --- UiScrollable ---------------------------------------------------------------------
    def _scroll(self, sel: Any, vertical: Any, forward: bool, steps: Any = 55) -> bool:
        """One UiScrollable swipe; True when the content moved."""
        phone = self.device.phone
        with self.device.lock:
            left, top, right, bottom = self.one(sel).widget.bounds
            before = phone.dump_xml()
            if vertical is False:
                adj = round((right - left) * DEADZONE)
                y = (top + bottom) // 2
                x1, x2 = (right - adj, left + adj) if forward else (left + adj, right - adj)
                phone.do_swipe(x1, y, x2, y, int(steps or 55) * 5)
            else:
                adj = round((bottom - top) * DEADZONE)
                x = (left + right) // 2
                y1, y2 = (bottom - adj, top + adj) if forward else (top + adj, bottom - adj)
                phone.do_swipe(x, y1, x, y2, int(steps or 55) * 5)
            return phone.dump_xml() != before

    def fling_forward(self, sel: Any, vertical: Any = True) -> bool:
        """UiScrollable.flingForward: one swipe of FLING_STEPS (5) steps, a fast one."""
        return self._scroll(sel, vertical, True, FLING_STEPS)

    def fling_backward(self, sel: Any, vertical: Any = True) -> bool:
        return self._scroll(sel, vertical, False, FLING_STEPS)

    def fling_to_beginning(self, sel: Any, vertical: Any = True, max_swipes: Any = 500) -> bool:
        return self.scroll_to_beginning(sel, vertical, max_swipes, FLING_STEPS)

    def fling_to_end(self, sel: Any, vertical: Any = True, max_swipes: Any = 500) -> bool:
        return self.scroll_to_end(sel, vertical, max_swipes, FLING_STEPS)

    def scroll_forward(self, sel: Any, vertical: Any = True, steps: Any = 55) -> bool:
        return self._scroll(sel, vertical, True, steps)

    def scroll_backward(self, sel: Any, vertical: Any = True, steps: Any = 55) -> bool:
        return self._scroll(sel, vertical, False, steps)

    def scroll_to_beginning(self, sel: Any, vertical: Any = True, max_swipes: Any = 500, steps: Any = 55) -> bool:
        for _ in range(int(max_swipes or 0)):
            if not self._scroll(sel, vertical, False, steps):
                break
        return True

    def scroll_to_end(self, sel: Any, vertical: Any = True, max_swipes: Any = 500, steps: Any = 55) -> bool:
        for _ in range(int(max_swipes or 0)):
            if not self._scroll(sel, vertical, True, steps):
                break
        return True

    def scroll_to(self, sel: Any, target: Any, vertical: Any = True) -> bool:
        """UiScrollable.scrollIntoView: found already, or from the top scroll forward until found."""
        if self.find(target):
            return True
        self.scroll_to_beginning(sel, vertical, MAX_SEARCH_SWIPES)
        for _ in range(MAX_SEARCH_SWIPES):
            if self.find(target):
                return True
            if not self._scroll(sel, vertical, True):
                break
        return bool(self.find(target))
