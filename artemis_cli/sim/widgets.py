"""A small widget tree: what both the renderer and the uiautomator dump are made from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

Rect = tuple[int, int, int, int]  # left, top, right, bottom (right/bottom exclusive, like Android)
Action = Callable[[], None]

TEXT_VIEW = "android.widget.TextView"
BUTTON = "android.widget.Button"
IMAGE_BUTTON = "android.widget.ImageButton"
EDIT_TEXT = "android.widget.EditText"
SWITCH = "android.widget.Switch"
CHECK_BOX = "android.widget.CheckBox"
RADIO_BUTTON = "android.widget.RadioButton"
FRAME = "android.widget.FrameLayout"
LINEAR = "android.widget.LinearLayout"
VIEW_GROUP = "android.view.ViewGroup"
RECYCLER = "androidx.recyclerview.widget.RecyclerView"
SCROLL_VIEW = "android.widget.ScrollView"
LIST_VIEW = "android.widget.ListView"
IMAGE_VIEW = "android.widget.ImageView"


@dataclass(eq=False)
class Widget:
    """One view. ``bounds`` is what the dump shows (clipped); ``frame`` is where it is drawn."""

    cls: str
    bounds: Rect
    text: str = ""
    rid: str = ""
    desc: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    enabled: bool = True
    hint: str = ""  # a text field's hint (uiautomator2 dumps it; an empty field's text shows it too)
    children: list[Widget] = field(default_factory=list)
    # --- render / behaviour only (never dumped) ---
    kind: str = ""
    size: int = 0
    align: str = "left"
    color: str = ""
    display: str | None = None  # what the picture shows when it differs from ``text`` (hints)
    frame: Rect | None = None
    on_tap: Action | None = None
    on_long: Action | None = None
    on_scroll: Callable[[int], None] | None = None
    on_double: Action | None = None  # a double tap (two taps within DOUBLE_TAP_TIMEOUT_MS)
    on_drag: Callable[[int, int], None] | None = None  # press, hold, move: dropped at (x, y)
    field_key: str | None = None

    @property
    def box(self) -> Rect:
        return self.frame if self.frame is not None else self.bounds

    def walk(self) -> Iterator[Widget]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(eq=False)
class Window:
    """A top-level window: the app, a dialog, the promotion pop-up, the keyboard, the system bars."""

    package: str
    root: Widget
    modal: bool = False  # dialogs: taps outside them are swallowed, a scrim is drawn below
    # pop-up menus: a touch outside closes the window (calls this) and does nothing else; no scrim
    dismiss: Action | None = None


def contains(r: Rect, x: int, y: int) -> bool:
    return r[0] <= x < r[2] and r[1] <= y < r[3]


def intersect(a: Rect, b: Rect) -> Rect | None:
    r = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    if r[0] >= r[2] or r[1] >= r[3]:
        return None
    return r


def area(r: Rect) -> int:
    return (r[2] - r[0]) * (r[3] - r[1])


def shift(w: Widget, dy: int) -> None:
    """Move a freshly built subtree vertically (both bounds and frame)."""
    for node in w.walk():
        b = node.bounds
        node.bounds = (b[0], b[1] + dy, b[2], b[3] + dy)
        if node.frame is not None:
            f = node.frame
            node.frame = (f[0], f[1] + dy, f[2], f[3] + dy)


def clip(w: Widget, viewport: Rect) -> Widget | None:
    """Clip a subtree to ``viewport``: nodes fully outside disappear, others get clipped bounds."""
    inter = intersect(w.bounds, viewport)
    if inter is None:
        return None
    if w.frame is None:
        w.frame = w.bounds
    w.bounds = inter
    kept: list[Widget] = []
    for child in w.children:
        c = clip(child, viewport)
        if c is not None:
            kept.append(c)
    w.children = kept
    return w


def takes_touch(w: Widget) -> bool:
    """A view that consumes a touch offered to it (``View.onTouchEvent`` returns true): clickable,
    long-clickable or checkable ones, disabled ones included (they swallow it and do nothing), and
    scroll containers (a list takes the touch to scroll on a move; a tap on it does nothing)."""
    return w.clickable or w.long_clickable or w.checkable or w.scrollable


def touch_path(root: Widget, x: int, y: int, takes: Callable[[Widget], bool] = takes_touch) -> list[Widget]:
    """The views a touch at (x, y) passes through, the root first and the one that takes it last,
    as ``ViewGroup.dispatchTouchEvent`` routes it: a view whose bounds contain the point offers it
    to its children in reverse drawing order (the last child, drawn on top, first), and takes it
    itself only when none of them did — so a later sibling drawn over an earlier one (a floating
    action button over a list row) takes it, and a view that takes no touches (a label drawn over a
    row) passes it on.  Empty when nothing takes it.  ``takes`` says which views take touches."""
    if not contains(root.bounds, x, y):
        return []
    for child in reversed(root.children):
        below = touch_path(child, x, y, takes)
        if below:
            return [root, *below]
    return [root] if takes(root) else []


def hit(root: Widget, x: int, y: int) -> Widget | None:
    """The widget a touch at (x, y) lands on (:func:`touch_path`), or None."""
    path = touch_path(root, x, y)
    return path[-1] if path else None


def listener_at(root: Widget, x: int, y: int, attr: str) -> Widget | None:
    """The widget whose gesture listener ``attr`` (``on_double``, ``on_drag``) a touch at (x, y)
    reaches: the touch is routed as :func:`touch_path` does, a listening widget taking it too (its
    ``onTouchEvent`` feeds a GestureDetector); None when a view drawn over it or inside it takes
    the touch first (a button in the row, a floating button over it)."""
    path = touch_path(root, x, y, lambda w: takes_touch(w) or getattr(w, attr) is not None)
    return path[-1] if path and getattr(path[-1], attr) is not None else None


def scroll_target(root: Widget, x: int, y: int) -> Widget | None:
    """The list a swipe starting at (x, y) scrolls: the innermost scroll container on the path of
    the touch (:func:`touch_path`).  A swipe that starts on a view drawn over a list but not inside
    it (a floating action button) scrolls nothing, as on a phone."""
    for node in reversed(touch_path(root, x, y)):
        if node.scrollable and node.on_scroll is not None:
            return node
    return None
