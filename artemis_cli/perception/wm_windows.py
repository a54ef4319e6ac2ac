"""The window manager's windows (``dumpsys window``) added to a dump of the active window.

A phone's ``uiautomator dump`` writes ``getRootInActiveWindow()`` only: the app, or the dialog or
pop-up in front of it — never the status bar, the navigation bar or the keyboard. uiautomator2's
dump holds every window. Perception works on one shape, the second: **every window on screen is a
top-level node of the tree**. For a dump of one window, the other visible windows come from
``dumpsys window`` (which the adb backend reads anyway, for the app in front: no extra round trip)
and are added by :func:`with_wm_windows` as childless top-level nodes, one per window, with the
window's frame as bounds and ``synthetic="true"``; the dumped root is marked with its window's
title. The observation stores that XML, so a stored step re-parses to the tree perception used.

What the added windows do (and only this):

* **System bars and the keyboard** (``STATUS_BAR``, ``NAVIGATION_BAR``, ``INPUT_METHOD`` and other
  System UI windows on screen) carry a ``content-desc`` ("Navigation bar", "Keyboard", …), so
  they take touches: a tap on the navigation bar is recorded as a tap on it, not on the app under
  it (an edge-to-edge app draws there), and app elements under the keyboard get no tap point.
  Their buttons and keys are unknown: the dump does not have them.
* **App windows under the active one** (the app's screen under its dialog) carry nothing: they
  never take touches, they only tell the outcome that the screen is still there
  (``operators/outcome.py``: a dialog opening is "new window", not also "window … closed").
* They are never elements (``index_elements`` skips synthetic nodes) and never say whether the
  keyboard is up (``windows.keyboard_in_dump`` ignores them: ``dumpsys input_method`` says it).

The wallpaper and windows that are not on screen (``isVisible=false``: a hidden keyboard, the
notification shade) are left out. A dump that already holds several windows is left as it is.
Window titles and packages are device text: they are escaped into attributes, never trusted as
markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from artemis_cli.perception.types import Bounds

__all__ = ["WmWindow", "parse_flags", "parse_window_list", "with_wm_windows"]

_WINDOW_RE = re.compile(r"^\s*Window #\d+ Window\{[0-9a-f]+ (?:u\d+ )?(?P<title>.*)\}:\s*$")
_PACKAGE_RE = re.compile(r"\bpackage=(\S+)")
_TYPE_RE = re.compile(r"\bty=(\S+)")
# Android 12+: "Frames: parent=… display=… frame=[l,t][r,b] …"; before: "mFrame=[l,t][r,b]"
_FRAME_RE = re.compile(r"(?:\bframe=|\bmFrame=)\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_VISIBLE_RE = re.compile(r"^\s*isVisible=(true|false)\s*$")
_VIEW_VIS_RE = re.compile(r"\bmViewVisibility=0x([0-9a-f]+)")
# the window's flags: "fl=DIM_BEHIND ALT_FOCUSABLE_IM …" (Android 10+: names), "fl=#81810100" /
# "fl=0x2" (older: a number); not "pfl=" (private flags)
_FLAGS_RE = re.compile(r"(?<![A-Za-z])fl=([^\n}]*)")
#: WindowManager.LayoutParams flag bits perception reads, by the name dumpsys prints
_FLAG_BITS = {0x2: "DIM_BEHIND", 0x8: "NOT_FOCUSABLE", 0x10: "NOT_TOUCHABLE", 0x20: "NOT_TOUCH_MODAL",
              0x20000: "ALT_FOCUSABLE_IM", 0x40000: "WATCH_OUTSIDE_TOUCH"}

#: Window types that are System UI's bars and panels, and what the added node is called.
_LABELS = {
    "STATUS_BAR": "Status bar",
    "NAVIGATION_BAR": "Navigation bar",
    "NAVIGATION_BAR_PANEL": "Navigation bar",
    "INPUT_METHOD": "Keyboard",
    "NOTIFICATION_SHADE": "Notification shade",
    "STATUS_BAR_ADDITIONAL": "Status bar",
    "SYSTEM_DIALOG": "System dialog",
    "VOLUME_OVERLAY": "Volume panel",
}
_IGNORED_TYPES = {"WALLPAPER", "APPLICATION_STARTING", "DRAG", "POINTER", "ACCESSIBILITY_OVERLAY",
                  "SCREENSHOT", "MAGNIFICATION_OVERLAY", "2024"}  # 2024: TYPE_SECURE_SYSTEM_OVERLAY
_IGNORED_TITLES = ("ScreenDecorOverlay", "pip-dismiss-overlay", "EdgeBackGestureHandler", "ShellDropTarget",
                   "RoundCorner", "SecondaryHomeHandle")
_TYPE_NAMES = {"2000": "STATUS_BAR", "2019": "NAVIGATION_BAR", "2011": "INPUT_METHOD", "2040": "NOTIFICATION_SHADE",
               "2024": "2024", "2013": "WALLPAPER", "1": "BASE_APPLICATION", "2": "APPLICATION"}


@dataclass(frozen=True)
class WmWindow:
    """One ``Window #N`` block of ``dumpsys window``."""

    title: str
    package: str
    type: str
    frame: Bounds
    visible: bool
    #: the ``fl=`` flag names (``DIM_BEHIND``, ``NOT_FOCUSABLE``, ``NOT_TOUCH_MODAL`` …); None when
    #: the block does not print them
    flags: tuple[str, ...] | None = None


def parse_flags(value: str) -> tuple[str, ...]:
    """The flag names of an ``fl=`` value: names as printed (Android 10+), or a number (``#2``,
    ``0x18002000``) read for the bits of :data:`_FLAG_BITS`; stops at the next ``key=value``."""
    names: list[str] = []
    for token in re.split(r"[\s|]+", value.strip()):
        if not token or "=" in token:
            break
        number = token[1:] if token.startswith("#") else token[2:] if token.lower().startswith("0x") else None
        if number is not None:
            try:
                bits = int(number, 16)
            except ValueError:
                continue
            names += [name for bit, name in _FLAG_BITS.items() if bits & bit]
        elif re.fullmatch(r"[A-Z][A-Z0-9_]*", token):
            names.append(token)
    return tuple(dict.fromkeys(names))


def parse_window_list(text: str) -> list[WmWindow]:
    """The windows of ``dumpsys window`` (or ``dumpsys window windows``), top-most first. A block
    without a frame is dropped; one that does not say ``isVisible=`` is visible unless its view is
    (``mViewVisibility`` 0x4 / 0x8)."""
    out: list[WmWindow] = []
    cur: dict[str, str] | None = None

    def close() -> None:
        if cur is not None and "frame" in cur:
            l_, t, r, b = (int(v) for v in cur["frame"].split(","))
            visible = cur.get("visible")
            if visible is None:
                visible = "false" if cur.get("view", "0") in ("4", "8") else "true"
            flags = parse_flags(cur["flags"]) if "flags" in cur else None
            out.append(WmWindow(cur["title"], cur.get("package", ""), cur.get("type", ""), Bounds(l_, t, r, b),
                                visible == "true", flags))

    for line in text.splitlines():
        m = _WINDOW_RE.match(line)
        if m:
            close()
            cur = {"title": m.group("title").strip()}
            continue
        if cur is None:
            continue
        if line.strip() and not line.startswith("    "):  # a line of the list, not of this block
            close()
            cur = None
            continue
        if "package" not in cur and (p := _PACKAGE_RE.search(line)):
            cur["package"] = p.group(1)
        if "type" not in cur and (t := _TYPE_RE.search(line)):
            cur["type"] = _TYPE_NAMES.get(t.group(1), t.group(1))
        if "flags" not in cur and (fl := _FLAGS_RE.search(line)):
            cur["flags"] = fl.group(1)
        if "frame" not in cur and (f := _FRAME_RE.search(line)):
            cur["frame"] = ",".join(f.groups())
        if (v := _VIEW_VIS_RE.search(line)) and "view" not in cur:
            cur["view"] = v.group(1)
        if vm := _VISIBLE_RE.match(line):
            cur["visible"] = vm.group(1)
    close()
    return out


def _shown(win: WmWindow) -> bool:
    return (win.visible and win.frame.area > 0 and win.type not in _IGNORED_TYPES
            and not win.title.startswith(_IGNORED_TITLES))


def _top_level_roots(xml: str) -> list[tuple[int, int]]:
    """(start, end of the opening tag) of each top-level ``<node`` in a uiautomator dump."""
    out: list[tuple[int, int]] = []
    depth = 0
    for m in re.finditer(r"<(/?)node\b[^>]*?(/?)>", xml):
        closing, self_closing = m.group(1) == "/", m.group(2) == "/"
        if closing:
            depth -= 1
            continue
        if depth == 0:
            out.append((m.start(), m.end()))
        if not self_closing:
            depth += 1
    return out


_ROOT_BOUNDS_RE = re.compile(r'\bbounds="\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]"')
_ROOT_PACKAGE_RE = re.compile(r'\bpackage="([^"]*)"')


def _flags_attr(win: WmWindow) -> str:
    return "" if win.flags is None else f" window-flags={quoteattr(' '.join(win.flags))}"


def _node(win: WmWindow, index: int) -> str:
    b = win.frame
    desc = _LABELS.get(win.type, "")
    return (f'<node index="{index}" text="" resource-id="" class="android.widget.FrameLayout" '
            f"package={quoteattr(win.package)} content-desc={quoteattr(desc)} checkable=\"false\" "
            'checked="false" clickable="false" enabled="true" focusable="false" focused="false" '
            'scrollable="false" long-clickable="false" password="false" selected="false" '
            f'bounds="[{b.left},{b.top}][{b.right},{b.bottom}]" window-title={quoteattr(win.title)} '
            f'window-type={quoteattr(win.type)}{_flags_attr(win)} synthetic="true" />')


def with_wm_windows(xml: str, windows: list[WmWindow]) -> str:
    """``xml`` (a dump) with the windows it lacks added, as the module docstring says; unchanged
    when it holds other than one top-level node, or when ``windows`` is empty."""
    roots = _top_level_roots(xml)
    shown = [w for w in windows if _shown(w)]
    end = xml.rfind("</hierarchy>")
    if len(roots) != 1 or not shown or end < 0:
        return xml
    start, tag_end = roots[0]
    tag = xml[start:tag_end]
    pm, bm = _ROOT_PACKAGE_RE.search(tag), _ROOT_BOUNDS_RE.search(tag)
    package = pm.group(1) if pm else ""
    bounds = Bounds(*(int(v) for v in bm.groups())) if bm else None
    # the dumped window: the top-most shown window of its package, the one with its bounds first
    same = [w for w in shown if w.package == package]
    dumped = next((w for w in same if w.frame == bounds), None) or next(
        (w for w in same if w.type not in _LABELS), None)
    extra = [w for w in shown if w is not dumped]
    if dumped is not None:
        mark = f" window-title={quoteattr(dumped.title)} window-type={quoteattr(dumped.type)}{_flags_attr(dumped)}"
        cut = tag_end - (2 if tag.endswith("/>") else 1)
        xml = xml[:cut].rstrip() + mark + (" />" if tag.endswith("/>") else ">") + xml[tag_end:]
        end = xml.rfind("</hierarchy>")
    added = "".join(_node(w, 0) for w in reversed(extra))  # bottom to top, as the screen draws them
    return xml[:end] + added + xml[end:]
