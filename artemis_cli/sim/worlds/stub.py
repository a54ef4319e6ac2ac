"""A stub app: a package from a real phone's package list (``artemis sim serve --packages``).

The sim knows nothing about it but its package name, like plain adb: it opens one screen that
names its package and has no human label, so resolving an app name against it is done from the
package name alone.
"""

from __future__ import annotations

from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Window
from artemis_cli.sim.worlds.base import App, AppContext


class StubApp(App):
    def __init__(self, ctx: AppContext, package: str) -> None:
        self.package = package
        super().__init__(ctx)

    def build(self, ui: Ui) -> list[Window]:
        top = ui.content_top
        body = ui.text((ui.px(48), top + ui.px(48), ui.w - ui.px(48), top + ui.px(160)), self.package,
                       rid="package", size=40)
        return [self.window(ui, [ui.app_bar(self.package), body])]
