"""The notification shade (System UI): what uiautomator2's ``openNotification`` /
``openQuickSettings`` and a swipe down from the status bar pull down.

It is a System UI window over the whole screen above the app (and the keyboard): the quick
settings tiles (Internet, Bluetooth, Airplane mode: a tap toggles the setting, as the tile does)
and, since the sim's apps post none, "No notifications".  While it is open it is the active
window (``getRootInActiveWindow`` returns it) and takes every touch except the navigation bar's;
Back, Home or a swipe up closes it.  ``openQuickSettings`` opens it expanded (the tiles with
their labels); ``openNotification`` shows the collapsed tile row.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from artemis_cli.sim import widgets as W
from artemis_cli.sim.system import SettingsStore
from artemis_cli.sim.widgets import Widget, Window

SYSTEMUI = "com.android.systemui"
TILES = (("Internet", "global", "wifi_on"), ("Bluetooth", "global", "bluetooth_on"),
         ("Airplane mode", "global", "airplane_mode_on"))


def _rid(name: str) -> str:
    return f"{SYSTEMUI}:id/{name}"


class Shade:
    def __init__(self) -> None:
        self.state: str | None = None  # None, "notifications" or "quick_settings"

    @property
    def open(self) -> bool:
        return self.state is not None

    def pull_down(self, quick_settings: bool = False) -> None:
        self.state = "quick_settings" if quick_settings else "notifications"

    def close(self) -> None:
        self.state = None

    def window(self, width: int, height: int, short: int, clock: str, settings: SettingsStore,
               changed: Callable[[], None]) -> Window:
        """The shade from the top of the screen to ``height`` (the top of the navigation bar)."""
        s = short / 1080

        def px(v: float) -> int:
            return round(v * s)

        def toggle(ns: str, key: str) -> None:
            settings.put(ns, key, "0" if settings.flag(ns, key) else "1")
            changed()

        expanded = self.state == "quick_settings"
        pad, top = px(48), px(96)
        kids: list[Widget] = [Widget(W.TEXT_VIEW, (pad, px(16), pad + px(300), top), text=clock, rid=_rid("clock"),
                                     kind="text", size=px(44), color="status_text")]
        tile_h = px(200 if expanded else 140)
        cols = len(TILES)
        tw = (width - 2 * pad) // cols
        tiles = []
        for i, (label, ns, key) in enumerate(TILES):
            on = settings.flag(ns, key)
            box = (pad + i * tw + px(8), top + px(24), pad + (i + 1) * tw - px(8), top + px(24) + tile_h)
            state = "On" if on else "Off"
            tiles.append(Widget(W.SWITCH if expanded else W.BUTTON, box, text=label if expanded else "",
                                desc=f"{label}. {state}", rid=_rid("tile"), clickable=True, checkable=True,
                                checked=on, on_tap=partial(toggle, ns, key), kind="button" if on else "flat",
                                size=px(34), display=label if expanded else label[:1]))
        kids.append(Widget(W.VIEW_GROUP, (pad, top, width - pad, top + tile_h + px(48)),
                           rid=_rid("quick_settings_panel"), children=tiles))
        y = top + tile_h + px(96)
        if not expanded:
            kids.append(Widget(W.TEXT_VIEW, (0, y, width, y + px(120)), text="No notifications",
                               rid=_rid("no_notifications"), kind="text", size=px(40), align="center",
                               color="status_text"))
        panel = Widget(W.FRAME, (0, 0, width, height), rid=_rid("notification_panel"), children=kids,
                       kind="statusbar", scrollable=True, on_scroll=self._scrolled)
        root = Widget(W.FRAME, (0, 0, width, height), rid=_rid("notification_shade"), children=[panel],
                      kind="statusbar")
        return Window(SYSTEMUI, root, modal=True)

    def _scrolled(self, dy: int) -> None:
        """A swipe on the shade: up (content moving up, dy > 0) closes it, down expands it."""
        if dy > 0:
            self.close()
        elif self.state == "notifications":
            self.state = "quick_settings"
