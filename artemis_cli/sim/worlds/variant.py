"""The ``variant`` world: the default world's apps laid out differently, for replay tests.

Besides the layout knobs of ``LayoutOptions`` (FAB on the left, taller rows, three launcher
columns, another launcher order), every app except the launcher gets

- a **banner** under the app bar (TextView ``<pkg>:id/variant_banner``) that shifts the content
  down by ``BANNER_HEIGHT`` px (at 1080 px width);
- **reordered list items**: the lists named in ``REVERSED_LISTS`` show their rows in reverse order
  (alarms latest first, Settings from About phone up, notes newest first);
- **renamed button labels with the same resource-id**: dialog buttons listed in ``RENAMED_BUTTONS``
  (``android:id/button1`` "OK" reads "Save").

Replay by element semantics survives all three; replay by recorded coordinates does not.
"""

from __future__ import annotations

from collections.abc import Callable

from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Rect, Widget
from artemis_cli.sim.worlds.base import App

BANNER_HEIGHT = 132
BANNER_TEXT = "Tip: your phone was backed up today"
REVERSED_LISTS = frozenset({"alarms", "list_main", "list_network", "notes"})
RENAMED_BUTTONS = {("android:id/button1", "OK"): "Save"}


class VariantUi(Ui):
    """``Ui`` with the variant world's banner, list order and button labels."""

    @property
    def content_top(self) -> int:
        return self.top + self.px(self.opts.app_bar) + self.px(BANNER_HEIGHT)

    def screen(self, children: list[Widget], *, kind: str = "window") -> Widget:
        if any(c.kind == "appbar" for c in children):
            y = self.top + self.px(self.opts.app_bar)
            banner = self.text((self.px(48), y, self.w - self.px(48), y + self.px(BANNER_HEIGHT)), BANNER_TEXT,
                               size=38, rid="variant_banner", color="muted")
            at = next(i for i, c in enumerate(children) if c.kind == "appbar") + 1
            children = [*children[:at], banner, *children[at:]]
        return super().screen(children, kind=kind)

    def vlist(self, r: Rect, key: str, rows: list[tuple[int, Callable[[int], Widget]]], *,
              rid: str = "list", bottom_pad: int = 0) -> Widget:
        if key in REVERSED_LISTS:
            rows = list(reversed(rows))
        return super().vlist(r, key, rows, rid=rid, bottom_pad=bottom_pad)

    def dialog(self, r: Rect, title: str, body: list[Widget], buttons: list[tuple[str, str, Callable[[], None]]]) -> Widget:
        renamed = [(RENAMED_BUTTONS.get((rid, label), label), rid, cb) for label, rid, cb in buttons]
        return super().dialog(r, title, body, renamed)


def variant_of(app: type[App]) -> type[App]:
    """A subclass of ``app`` that builds its screens with ``VariantUi``."""

    def ui(self: App) -> Ui:
        return VariantUi(self.package, self.ctx.width, self.ctx.height, self.ctx.opts, self.ui_state)

    return type(f"Variant{app.__name__}", (app,), {"ui": ui, "__doc__": f"{app.__name__} in the variant world."})
