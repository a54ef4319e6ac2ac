"""Launcher (com.android.launcher3): a grid of app icons."""

from __future__ import annotations

from functools import partial

from artemis_cli.sim import widgets as W
from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import App

APP_PACKAGES: dict[str, str] = {
    "Settings": "com.android.settings",
    "Clock": "com.android.deskclock",
    "Contacts": "com.android.contacts",
    "Notes": "com.artemis.notes",
    "Shop": "com.artemis.shop",
}


class Launcher(App):
    package = "com.android.launcher3"
    label = "Home"

    def build(self, ui: Ui) -> list[Window]:
        cols = self.ctx.opts.launcher_columns
        cell_w = ui.w // cols
        cell_h = ui.px(300)
        y0 = ui.top + ui.px(240)
        icons: list[Widget] = []
        for i, label in enumerate(self.ctx.opts.launcher_order):
            col, line = i % cols, i // cols
            x, y = col * cell_w, y0 + line * cell_h
            pkg = APP_PACKAGES[label]
            icons.append(Widget(W.TEXT_VIEW, (x + ui.px(10), y, x + cell_w - ui.px(10), y + cell_h - ui.px(20)),
                                text=label, desc=label, rid="", clickable=True, focusable=True,
                                long_clickable=True, on_tap=partial(self.ctx.launch, pkg),
                                kind="launcher_icon", size=ui.px(38), align="center"))
        grid = Widget(W.VIEW_GROUP, (0, y0, ui.w, y0 + cell_h * ((len(icons) + cols - 1) // cols)),
                      rid=ui.rid("workspace"), children=icons)
        return [self.window(ui, [grid], kind="wallpaper")]
