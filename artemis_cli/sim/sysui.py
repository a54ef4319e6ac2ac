"""The phone's own windows: the status bar, the 3-button navigation bar and the keyboard (IME).

Each is a top-level ``Window`` like an app's, so the renderer draws it and the dumps list it as a
window of its own, with the packages and ids real phones use (System UI's
``com.android.systemui:id/navigation_bar_frame`` with Back / Home / Overview buttons, Gboard's
``com.google.android.inputmethod.latin`` keys ``key_pos_…``).  Sizes scale with the short side / 1080.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from artemis_cli.sim import widgets as W
from artemis_cli.sim.keyboard import Key
from artemis_cli.sim.widgets import Widget, Window

SYSTEMUI = "com.android.systemui"
IME_PACKAGE = "com.google.android.inputmethod.latin"
NAV_BAR_HEIGHT = 126  # px at 1080 wide: 48 dp at 420 dpi, the 3-button navigation bar
NAV_BUTTON_WIDTH = 236  # px at 1080 wide
_IME_IDS = {"shift": "key_pos_shift", "delete": "key_pos_del", "mode": "key_pos_switch_to_symbol",
            "space": "key_pos_space", "enter": "key_pos_ime_action"}
_IME_DESCS = {"shift": "Shift", "delete": "Delete", "space": "Space", "enter": "Enter"}


def unit(width: int, height: int | None = None) -> float:
    """Pixels per 1080th of the screen's short side: sizes stay the same in dp when the phone
    turns to landscape (the density does not change with the rotation)."""
    return min(width, height if height is not None else width) / 1080


def nav_bar_height(width: int, height: int | None = None) -> int:
    return round(NAV_BAR_HEIGHT * unit(width, height))


def _sysui(name: str) -> str:
    return f"{SYSTEMUI}:id/{name}"


def status_bar(width: int, height_px: int, clock: str, radio: str, screen_height: int | None = None) -> Window:
    """Clock on the left, connectivity and battery on the right (``height_px`` high)."""
    s = unit(width, screen_height)
    sb = height_px
    pad = round(48 * s)
    kids = [
        Widget(W.TEXT_VIEW, (pad, 0, pad + round(200 * s), sb), text=clock, rid=_sysui("clock"), kind="text",
               size=round(38 * s), color="status_text"),
        Widget(W.TEXT_VIEW, (width - pad - round(420 * s), 0, width - pad - round(130 * s), sb),
               text=radio, desc=radio, rid=_sysui("connectivity"), kind="text", size=round(32 * s),
               color="status_text", align="center"),
        Widget(W.TEXT_VIEW, (width - pad - round(120 * s), 0, width - pad, sb), text="100%",
               desc="Battery 100 percent.", rid=_sysui("battery_percentage"), kind="text", size=round(34 * s),
               color="status_text", align="center"),
    ]
    bar = Widget(W.FRAME, (0, 0, width, sb), rid=_sysui("status_bar"), children=kids)
    return Window(SYSTEMUI, Widget(W.FRAME, (0, 0, width, sb), children=[bar], kind="statusbar"))


def nav_bar(width: int, height: int, press: Callable[[str], None]) -> Window:
    """The 3-button navigation bar along the bottom edge: Back, Home, Overview (AOSP layout)."""
    s = unit(width, height)
    top = height - nav_bar_height(width, height)
    half = round(NAV_BUTTON_WIDTH * s) // 2

    def button(k: int, name: str, desc: str, glyph: str, key: str, long: bool = False) -> Widget:
        cx = round(width * k / 4)
        return Widget(W.IMAGE_VIEW, (cx - half, top, cx + half, height), desc=desc, rid=_sysui(name),
                      clickable=True, focusable=True, long_clickable=long, on_tap=partial(press, key),
                      kind="icon", display=glyph, color="status_text")

    # Document order as System UI lays them out (021): back, recent_apps, home.
    buttons = [button(1, "back", "Back", "nav_back", "back"), button(3, "recent_apps", "Overview", "nav_recents",
                                                                     "recents"),
               button(2, "home", "Home", "nav_home", "home", long=True)]
    view = Widget(W.FRAME, (0, top, width, height), rid=_sysui("navigation_bar_view"), children=buttons)
    root = Widget(W.FRAME, (0, top, width, height), rid=_sysui("navigation_bar_frame"), children=[view],
                  kind="navbar")
    return Window(SYSTEMUI, root)


def ime_window(width: int, top: int, bottom: int, keys: list[Key], symbols: bool,
               press: Callable[[str], None]) -> Window:
    """Gboard's window: one clickable node per key (``content-desc`` = what the key types)."""
    kids: list[Widget] = []
    row, col, last_top = -1, 0, None
    for key in keys:
        if key.rect[1] != last_top:
            row, col, last_top = row + 1, 0, key.rect[1]
        a = key.action
        if a == "mode":
            rid, desc = _IME_IDS[a], "Letters" if symbols else "Symbols"
        elif a in _IME_IDS:
            rid, desc = _IME_IDS[a], _IME_DESCS[a]
        else:
            rid, desc = f"key_pos_{row}_{col}", a
        kids.append(Widget(W.FRAME, key.rect, desc=desc, rid=f"{IME_PACKAGE}:id/{rid}", clickable=True,
                           on_tap=partial(press, a), kind="key", display=key.label))
        col += 1
    holder = Widget(W.FRAME, (0, top, width, bottom), rid=f"{IME_PACKAGE}:id/keyboard_holder", children=kids)
    return Window(IME_PACKAGE, Widget(W.FRAME, (0, top, width, bottom), children=[holder], kind="keyboard"))

