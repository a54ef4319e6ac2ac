"""Layout helpers: app bar, rows, lists, switches, text fields, FABs, dialogs.

Every helper builds fresh ``Widget`` objects from the app's current state; apps rebuild their
tree after every action, so there is no retained view state beyond ``UiState``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from artemis_cli.sim import widgets as W
from artemis_cli.sim.widgets import Action, Rect, Widget


@dataclass(frozen=True)
class LayoutOptions:
    """Per-world layout knobs (a "variant" world lays the same apps out differently)."""

    status_bar: int = 96
    app_bar: int = 168
    row: int = 168
    row_two_line: int = 200
    fab_side: str = "right"  # "right" | "left"
    launcher_columns: int = 4
    launcher_order: tuple[str, ...] = ("Settings", "Clock", "Contacts", "Notes", "Shop")
    dialog_margin: int = 60


@dataclass
class UiState:
    """The per-app view state that survives rebuilds: text fields, focus, scroll offsets."""

    fields: dict[str, str] = field(default_factory=dict)
    focus: str | None = None
    scroll: dict[str, int] = field(default_factory=dict)
    replace_next: bool = False  # the next typed text replaces the focused field (time fields)

    def reset(self) -> None:
        self.fields.clear()
        self.focus = None
        self.scroll.clear()
        self.replace_next = False


class Ui:
    """Builds widgets for one app at one screen size."""

    def __init__(self, package: str, width: int, height: int, opts: LayoutOptions, st: UiState) -> None:
        self.pkg = package
        self.w = width
        self.h = height
        self.opts = opts
        self.st = st
        self.s = min(width, height) / 1080.0  # dp stay dp in landscape (sysui.unit)
        self.top = self.px(opts.status_bar)
        self.fab_clearance = self.px(260)

    # --- units ------------------------------------------------------------------------------
    def px(self, v: float) -> int:
        return round(v * self.s)

    def rid(self, name: str) -> str:
        if not name:
            return ""
        return name if ":" in name else f"{self.pkg}:id/{name}"

    # --- primitives -------------------------------------------------------------------------
    def text(self, r: Rect, text: str, *, size: int = 44, rid: str = "", align: str = "left",
             color: str = "text", desc: str = "") -> Widget:
        return Widget(W.TEXT_VIEW, r, text=text, rid=self.rid(rid), desc=desc, kind="text",
                      size=self.px(size), align=align, color=color)

    def button(self, r: Rect, label: str, on_tap: Action | None, *, rid: str = "", desc: str = "",
               flat: bool = False, enabled: bool = True, size: int = 42) -> Widget:
        return Widget(W.BUTTON, r, text=label, rid=self.rid(rid), desc=desc, clickable=True,
                      focusable=True, enabled=enabled, on_tap=on_tap, kind="flat" if flat else "button",
                      size=self.px(size), align="center")

    def icon_button(self, r: Rect, desc: str, glyph: str, on_tap: Action | None, *, rid: str = "") -> Widget:
        return Widget(W.IMAGE_BUTTON, r, desc=desc, rid=self.rid(rid), clickable=True, focusable=True,
                      on_tap=on_tap, kind="icon", display=glyph, size=self.px(56))

    def switch(self, r: Rect, checked: bool, on_tap: Action, *, rid: str = "", desc: str = "") -> Widget:
        return Widget(W.SWITCH, r, text="ON" if checked else "OFF", rid=self.rid(rid), desc=desc,
                      checkable=True, checked=checked, clickable=True, focusable=True, on_tap=on_tap,
                      kind="switch")

    def radio(self, r: Rect, label: str, checked: bool, on_tap: Action, *, rid: str = "",
              cls: str = W.RADIO_BUTTON) -> Widget:
        return Widget(cls, r, text=label, rid=self.rid(rid), checkable=True, checked=checked,
                      clickable=True, focusable=True, on_tap=on_tap,
                      kind="radio" if cls == W.RADIO_BUTTON else "checkbox", size=self.px(44))

    def edit(self, r: Rect, key: str, hint: str, *, rid: str = "", password: bool = False,
             replace_on_focus: bool = False, size: int = 44, multiline: bool = False) -> Widget:
        value = self.st.fields.get(key, "")
        focused = self.st.focus == key
        shown = "•" * len(value) if password else value
        st = self.st

        def focus() -> None:
            st.focus = key
            st.replace_next = replace_on_focus

        return Widget(W.EDIT_TEXT, r, text=shown if value else hint, hint=hint, rid=self.rid(rid), clickable=True,
                      focusable=True, focused=focused, long_clickable=True, password=password,
                      on_tap=focus, kind="edit", field_key=key, size=self.px(size),
                      display=None if value else "", color="multiline" if multiline else "")

    def container(self, r: Rect, children: list[Widget], *, cls: str = W.LINEAR, rid: str = "",
                  on_tap: Action | None = None, desc: str = "", kind: str = "") -> Widget:
        return Widget(cls, r, rid=self.rid(rid), desc=desc, children=children, clickable=on_tap is not None,
                      focusable=on_tap is not None, on_tap=on_tap, kind=kind)

    # --- screens ----------------------------------------------------------------------------
    def screen(self, children: list[Widget], *, kind: str = "window") -> Widget:
        content = Widget(W.FRAME, (0, self.top, self.w, self.h), rid="android:id/content", children=children)
        return Widget(W.FRAME, (0, self.top, self.w, self.h), children=[content], kind=kind)

    def app_bar(self, title: str, *, up: Action | None = None, actions: list[Widget] | None = None) -> Widget:
        t, h = self.top, self.px(self.opts.app_bar)
        kids: list[Widget] = []
        x = self.px(48)
        if up is not None:
            kids.append(self.icon_button((self.px(12), t + self.px(24), self.px(132), t + h - self.px(24)),
                                         "Navigate up", "back", up))
            x = self.px(156)
        right = self.w - self.px(24)
        acts = actions or []
        kids.append(self.text((x, t, right - sum(a.bounds[2] - a.bounds[0] for a in acts), t + h), title,
                              size=56, color="text"))
        kids.extend(acts)
        return Widget(W.VIEW_GROUP, (0, t, self.w, t + h), rid=self.rid("toolbar"), children=kids, kind="appbar")

    def bar_actions(self, specs: list[tuple[str, str, str, Action | None]]) -> list[Widget]:
        """App-bar text buttons laid out right to left: (label, rid, desc, on_tap)."""
        t, h = self.top, self.px(self.opts.app_bar)
        out: list[Widget] = []
        right = self.w - self.px(24)
        for label, rid, desc, cb in specs:
            width = self.px(60 + 26 * len(label))
            out.append(self.button((right - width, t + self.px(30), right, t + h - self.px(30)), label, cb,
                                   rid=rid, desc=desc, flat=True, size=40))
            right -= width + self.px(16)
        out.reverse()
        return out

    @property
    def content_top(self) -> int:
        return self.top + self.px(self.opts.app_bar)

    def fab(self, desc: str, on_tap: Action, *, rid: str = "fab", label: str = "") -> Widget:
        size = self.px(168)
        margin = self.px(48)
        width = size if not label else self.px(120 + 26 * len(label))
        y1 = self.h - self.px(72)
        if self.opts.fab_side == "left":
            r = (margin, y1 - size, margin + width, y1)
        else:
            r = (self.w - margin - width, y1 - size, self.w - margin, y1)
        if label:
            return Widget(W.BUTTON, r, text=label, desc=desc, rid=self.rid(rid), clickable=True, focusable=True,
                          on_tap=on_tap, kind="fab", size=self.px(44), align="center")
        return Widget(W.IMAGE_BUTTON, r, desc=desc, rid=self.rid(rid), clickable=True, focusable=True,
                      on_tap=on_tap, kind="fab", display="plus")

    def row(self, y: int, h: int, title: str, *, summary: str = "", on_tap: Action | None = None,
            rid: str = "", trailing: Widget | None = None, desc: str = "") -> Widget:
        pad = self.px(48)
        right = self.w - pad
        kids: list[Widget] = []
        if trailing is not None:
            tw = trailing.bounds[2] - trailing.bounds[0]
            th = trailing.bounds[3] - trailing.bounds[1]
            tr = (right - tw, y + (h - th) // 2, right, y + (h - th) // 2 + th)
            trailing.bounds = tr
            right -= tw + self.px(24)
        if summary:
            kids.append(self.text((pad, y + self.px(20), right, y + h // 2 + self.px(6)), title, size=46,
                                  rid="android:id/title"))
            kids.append(self.text((pad, y + h // 2 + self.px(6), right, y + h - self.px(20)), summary, size=36,
                                  rid="android:id/summary", color="muted"))
        else:
            kids.append(self.text((pad, y, right, y + h), title, size=46, rid="android:id/title"))
        if trailing is not None:
            kids.append(trailing)
        return Widget(W.LINEAR, (0, y, self.w, y + h), rid=self.rid(rid), desc=desc, children=kids,
                      clickable=on_tap is not None, focusable=on_tap is not None, on_tap=on_tap, kind="row")

    def vlist(self, r: Rect, key: str, rows: list[tuple[int, Callable[[int], Widget]]], *,
              rid: str = "list", bottom_pad: int = 0) -> Widget:
        """A RecyclerView showing only the rows that intersect its viewport (clipped)."""
        total = sum(h for h, _ in rows) + bottom_pad
        view_h = r[3] - r[1]
        max_scroll = max(0, total - view_h)
        st = self.st
        off = min(max(st.scroll.get(key, 0), 0), max_scroll)
        st.scroll[key] = off
        kids: list[Widget] = []
        y = r[1] - off
        for h, make in rows:
            if y + h > r[1] and y < r[3]:
                w = make(y)
                c = W.clip(w, r)
                if c is not None:
                    kids.append(c)
            y += h

        def on_scroll(dy: int) -> None:
            st.scroll[key] = min(max(st.scroll.get(key, 0) + dy, 0), max_scroll)

        return Widget(W.RECYCLER, r, rid=self.rid(rid), children=kids, scrollable=True,
                      focusable=True, on_scroll=on_scroll, kind="list")

    @staticmethod
    def placed(w: Widget, built_at: int) -> Callable[[int], Widget]:
        """Adapter for ``vlist``: a row built at ``built_at`` is moved to wherever the list puts it."""

        def make(y: int) -> Widget:
            W.shift(w, y - built_at)
            return w

        return make

    # --- dialogs ----------------------------------------------------------------------------
    def dialog_rect(self, height: int, *, y_center: float = 0.42) -> Rect:
        m = self.px(self.opts.dialog_margin)
        h = self.px(height)
        cy = round(self.h * y_center)
        return (m, cy - h // 2, self.w - m, cy - h // 2 + h)

    def dialog(self, r: Rect, title: str, body: list[Widget], buttons: list[tuple[str, str, Action]]) -> Widget:
        """Title + body widgets (already placed) + text buttons at the bottom right, in the frame an
        ``AlertDialog``'s window has on a phone (DecorView > FrameLayout > ``android:id/content`` >
        ``android:id/parentPanel``; the title ``android:id/alertTitle``)."""
        pad = self.px(60)
        kids: list[Widget] = []
        if title:
            kids.append(self.text((r[0] + pad, r[1] + self.px(40), r[2] - pad, r[1] + self.px(130)), title,
                                  size=52, rid="android:id/alertTitle"))
        kids.extend(body)
        right = r[2] - self.px(36)
        btns: list[Widget] = []
        for label, rid, cb in reversed(buttons):
            width = self.px(80 + 26 * len(label))
            btns.append(self.button((right - width, r[3] - self.px(150), right, r[3] - self.px(40)), label, cb,
                                    rid=rid, flat=True))
            right -= width + self.px(16)
        kids.extend(reversed(btns))
        # AOSP's AlertDialog window: the DecorView, its frame, android:id/content, the parentPanel
        panel = Widget(W.LINEAR, r, rid="android:id/parentPanel", children=kids, kind="dialog")
        content = Widget(W.FRAME, r, rid="android:id/content", children=[panel])
        return Widget(W.FRAME, r, children=[Widget(W.FRAME, r, children=[content])])
