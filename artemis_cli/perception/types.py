"""Typed results of perception. Plain frozen dataclasses; JSON-friendly via ``to_dict``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar

from .quoting import MAX_QUOTED_CHARS, one_token, quote_untrusted

LabelSource = Literal["index", "hit_test", "none"]
T = TypeVar("T")


@dataclass(frozen=True)
class Bounds:
    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return max(0, self.right - self.left)

    @property
    def height(self) -> int:
        return max(0, self.bottom - self.top)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> tuple[int, int]:
        return ((self.left + self.right) // 2, (self.top + self.bottom) // 2)

    def contains(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def as_list(self) -> list[int]:
        return [self.left, self.top, self.right, self.bottom]

    def __str__(self) -> str:  # uiautomator's own notation
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"


@dataclass(frozen=True)
class UINode:
    """One ``<node>`` of a uiautomator dump. ``path`` is its position in the tree ("0.3.1")."""

    path: str
    depth: int
    class_name: str = ""
    text: str = ""
    resource_id: str = ""
    package: str = ""
    content_desc: str = ""
    bounds: Bounds = field(default_factory=lambda: Bounds(0, 0, 0, 0))
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    visible_to_user: bool | None = None
    naf: bool = False
    hint: str = ""
    # uiautomator2's ``display-id`` (the display the node's window is on); None when not dumped.
    display_id: int | None = None
    # uiautomator2's ``drawing-order`` (AccessibilityNodeInfo.getDrawingOrder): the node's place
    # among its siblings as the parent draws them, 1-based, higher on top (elevation counted);
    # 0 for a node without bounds or a virtual one.  None when not dumped.
    drawing_order: int | None = None
    # A top-level node's window as the window manager names it (``dumpsys window``: title and
    # type), added by :mod:`~artemis_cli.perception.wm_windows` to a dump of the active window;
    # ``synthetic``: the whole window was added from the window manager (no content of its own).
    window_title: str = ""
    window_type: str = ""
    #: the window manager's flags for it (``DIM_BEHIND``, ``NOT_FOCUSABLE``, ``NOT_TOUCH_MODAL`` …),
    #: None when not known (a dump not completed from ``dumpsys window``, or one that does not print them)
    window_flags: tuple[str, ...] | None = None
    synthetic: bool = False

    @property
    def interactive(self) -> bool:
        return self.clickable or self.long_clickable or self.checkable or self.scrollable or self.focusable

    @property
    def label(self) -> str:
        """The human label: text, else content-desc, else hint."""
        return self.text or self.content_desc or self.hint


@dataclass(frozen=True)
class UITree:
    """A parsed hierarchy: every node in document (pre-)order, plus what the root said."""

    rotation: int
    nodes: tuple[UINode, ...]
    screen_width: int
    screen_height: int
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.nodes)

    def cached(self, key: str, build: Callable[[UITree], T]) -> T:
        """``build(self)``, computed once per tree object and kept on it (the tree is immutable).

        Kept outside the dataclass fields: never compared, hashed or printed, and a tree made with
        ``dataclasses.replace`` starts without it."""
        store = self.__dict__.setdefault("_cache", {})
        value = store.get(key)
        if value is None:
            value = store[key] = build(self)
        return value


@dataclass(frozen=True)
class Element:
    """A node worth showing to the model, with its stable index (0..n-1) for this observation."""

    index: int
    node: UINode
    # What the element list shows: text, else content-desc, else a label borrowed from descendants.
    label: str = ""
    # True when ``label`` was borrowed from descendants (the node has no text/content-desc itself).
    label_borrowed: bool = False
    # Where to tap it, in pixels: a point of its visible part that hit-tests to it (or, for text
    # inside a control, to that control).  None: the centre of its bounds.
    point: tuple[int, int] | None = None

    @property
    def center(self) -> tuple[int, int]:
        """The point the element list shows and a tap by index uses."""
        return self.point if self.point is not None else self.node.bounds.center


@dataclass(frozen=True)
class Target:
    """Element semantics of an action's coordinate, recorded with every step."""

    text: str = ""
    content_desc: str = ""
    resource_id: str = ""
    class_name: str = ""
    bounds: tuple[int, int, int, int] | None = None
    label_source: LabelSource = "none"
    element_index: int | None = None
    password: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["bounds"] = list(self.bounds) if self.bounds else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Target:
        if not data:
            return cls()
        b = data.get("bounds")
        return cls(
            text=data.get("text", ""),
            content_desc=data.get("content_desc", ""),
            resource_id=data.get("resource_id", ""),
            class_name=data.get("class_name", ""),
            bounds=tuple(b) if b else None,
            label_source=data.get("label_source", "none"),
            element_index=data.get("element_index"),
            password=bool(data.get("password", False)),
        )

    def describe(self, limit: int | None = None) -> str:
        """Short phrase for ledgers and progress: 'Button "Wi-Fi" (id wifi_toggle)'.

        The label is device text (untrusted): JSON-quoted (cut to ``limit`` characters), and class
        and id are kept to one word, so screen text can neither end the quotes nor start a line
        of its own in a prompt.
        """
        if self.label_source == "none":
            return "(no element)"
        kind = one_token(self.class_name.rsplit(".", 1)[-1][:MAX_QUOTED_CHARS]) if self.class_name else "element"
        label = self.text or self.content_desc
        bits = [kind]
        if label:
            bits.append(quote_untrusted(label, limit))
        if self.resource_id:
            bits.append(f"(id {one_token(self.resource_id.rsplit('/', 1)[-1][:MAX_QUOTED_CHARS])})")
        return " ".join(bits)
