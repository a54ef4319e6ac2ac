"""What every simulated app is made of, and the context the phone gives it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from artemis_cli.sim.layout import LayoutOptions, Ui, UiState
from artemis_cli.sim.system import SettingsStore, VirtualClock
from artemis_cli.sim.widgets import Widget, Window

Row = dict[str, str | int]


@dataclass
class AppContext:
    width: int
    height: int
    seed: int
    opts: LayoutOptions
    settings: SettingsStore
    clock: VirtualClock
    launch: Callable[[str], None]
    shop_password: str | None = None  # None: the Shop's demo password (worlds/shop.py)


class App:
    """Base class: an app is state + ``build()`` (windows from state) + navigation."""

    package = ""
    label = ""

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx
        self.ui_state = UiState()
        self.error = ""
        self.reset_ui()

    # -- to override -------------------------------------------------------------------------
    def reset_ui(self) -> None:
        """Back to the start screen (launch after force-stop). Data is kept."""
        self.ui_state.reset()
        self.error = ""

    def build(self, ui: Ui) -> list[Window]:
        raise NotImplementedError

    def back(self) -> bool:
        """Handle back; False means the app has nothing to go back to (the phone goes home)."""
        return False

    def go_back(self) -> None:
        """An "up" arrow or Cancel button: same as the back key inside the app."""
        self.back()

    def on_enter(self, key: str) -> None:
        """Enter pressed while the field ``key`` is focused."""

    def query(self, table: str) -> list[Row] | None:
        """Rows for ``content query``; None when this app has no such table."""
        return None

    def snapshot(self) -> dict[str, object]:
        return {}

    # -- helpers -----------------------------------------------------------------------------
    def ui(self) -> Ui:
        return Ui(self.package, self.ctx.width, self.ctx.height, self.ctx.opts, self.ui_state)

    def clear_focus(self) -> None:
        self.ui_state.focus = None

    def field(self, key: str) -> str:
        return self.ui_state.fields.get(key, "")

    def set_fields(self, **values: str) -> None:
        self.ui_state.fields.update(values)
        self.ui_state.focus = None

    def window(self, ui: Ui, children: list[Widget], *, kind: str = "window") -> Window:
        return Window(self.package, ui.screen(children, kind=kind))

    def dialog_window(self, root: Widget) -> Window:
        return Window(self.package, root, modal=True)
