"""Settings (com.android.settings): network toggles, display, about phone."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import App

TIMEOUTS: list[tuple[str, int]] = [
    ("15 seconds", 15000), ("30 seconds", 30000), ("1 minute", 60000),
    ("2 minutes", 120000), ("5 minutes", 300000), ("10 minutes", 600000),
]
BRIGHTNESS_LEVELS = [round(i * 25.5) for i in range(11)]  # 0%, 10%, ... 100% -> 0..255

MAIN_ROWS: list[tuple[str, str, str]] = [
    ("Network & internet", "Wi-Fi, mobile data, airplane mode", "network"),
    ("Connected devices", "Bluetooth, pairing", "connected"),
    ("Display", "Dark theme, brightness, screen timeout", "display"),
    ("Sound", "Volume, vibration, Do Not Disturb", "sound"),
    ("Battery", "100%", "battery"),
    ("About phone", "Artemis Sim", "about"),
]
TITLES = {"main": "Settings", "network": "Network & internet", "connected": "Connected devices",
          "display": "Display", "sound": "Sound", "battery": "Battery", "about": "About phone"}
SWITCHES = {  # (screen, label) -> (namespace, key, on-value, off-value, resource id)
    ("network", "Wi-Fi"): ("global", "wifi_on", "1", "0", "wifi_switch"),
    ("network", "Airplane mode"): ("global", "airplane_mode_on", "1", "0", "airplane_switch"),
    ("network", "Mobile data"): ("global", "mobile_data", "1", "0", "mobile_data_switch"),
    ("connected", "Bluetooth"): ("global", "bluetooth_on", "1", "0", "bluetooth_switch"),
    ("display", "Dark theme"): ("secure", "ui_night_mode", "2", "1", "dark_theme_switch"),
}
BUILD_NUMBER = "AP1A.240305.019"


def brightness_percent(v: int) -> int:
    return round(max(0, min(255, v)) * 100 / 255)


def timeout_label(ms: int) -> str:
    for label, value in TIMEOUTS:
        if value == ms:
            return label
    return f"{ms // 1000} seconds"


class SettingsApp(App):
    package = "com.android.settings"
    label = "Settings"

    def reset_ui(self) -> None:
        super().reset_ui()
        self.stack: list[str] = ["main"]
        self.dialog: str | None = None

    @property
    def screen(self) -> str:
        return self.stack[-1]

    def go(self, screen: str) -> None:
        self.stack.append(screen)
        self.clear_focus()

    def back(self) -> bool:
        if self.dialog:
            self.dialog = None
            self.clear_focus()
            return True
        if len(self.stack) > 1:
            self.stack.pop()
            return True
        return False

    def open_dialog(self, name: str) -> None:
        self.dialog = name
        if name == "device_name":
            self.set_fields(device_name=self.ctx.settings.get("global", "device_name") or "")

    def toggle(self, ns: str, key: str, on: str, off: str) -> None:
        cur = self.ctx.settings.get(ns, key)
        self.ctx.settings.put(ns, key, off if cur == on else on)

    # -------------------------------------------------------------------------------------
    def build(self, ui: Ui) -> list[Window]:
        s = self.ctx.settings
        h1, h2 = ui.px(self.ctx.opts.row), ui.px(self.ctx.opts.row_two_line)
        specs: list[tuple[int, Callable[[int], Widget]]] = []
        top = ui.content_top
        y = 0
        scr = self.screen

        def add(w: Widget, height: int) -> None:
            nonlocal y
            specs.append((height, ui.placed(w, y)))
            y += height

        if scr == "main":
            for title, summary, target in MAIN_ROWS:
                if target == "about":
                    summary = s.get("global", "device_name") or ""
                add(ui.row(y, h2, title, summary=summary, on_tap=partial(self.go, target), rid=f"{target}_row"),
                    h2)
        elif scr in ("network", "connected", "display"):
            for (sc, label), (ns, key, on, off, rid) in SWITCHES.items():
                if sc != scr:
                    continue
                checked = s.get(ns, key) == on

                def flip(ns: str = ns, key: str = key, on: str = on, off: str = off) -> None:
                    self.toggle(ns, key, on, off)

                sw = ui.switch((0, 0, ui.px(140), ui.px(84)), checked, flip, rid=rid, desc=label)
                add(ui.row(y, h1, label, on_tap=flip, trailing=sw, rid=rid.replace("_switch", "_row")), h1)
            if scr == "display":
                pct = brightness_percent(s.get_int("system", "screen_brightness", 128))
                add(ui.row(y, h2, "Brightness level", summary=f"{pct}%", rid="brightness_row",
                           on_tap=lambda: self.open_dialog("brightness")), h2)
                ms = s.get_int("system", "screen_off_timeout", 30000)
                add(ui.row(y, h2, "Screen timeout", summary=f"After {timeout_label(ms)} of inactivity",
                           rid="screen_timeout_row", on_tap=lambda: self.open_dialog("timeout")), h2)
        elif scr == "about":
            for title, value, rid, cb in [
                ("Device name", s.get("global", "device_name") or "", "device_name_row",
                 lambda: self.open_dialog("device_name")),
                ("Model", "Artemis Sim", "model_row", None),
                ("Android version", "14", "android_version_row", None),
                ("Build number", BUILD_NUMBER, "build_number_row", None),
            ]:
                add(ui.row(y, h2, title, summary=value, rid=rid, on_tap=cb), h2)
        else:
            add(ui.text((ui.px(48), y, ui.w - ui.px(48), y + h1), "Nothing to adjust here in the simulator.",
                        size=40, color="muted"), h1)

        up = None if scr == "main" else self.go_back
        bar = ui.app_bar(TITLES.get(scr, "Settings"), up=up)
        lst = ui.vlist((0, top, ui.w, ui.h), f"list_{scr}", specs, rid="recycler_view")
        wins = [self.window(ui, [bar, lst])]
        if self.dialog:
            wins.append(self.dialog_window(self.build_dialog(ui)))
        return wins

    def build_dialog(self, ui: Ui) -> Widget:
        s = self.ctx.settings
        close = self.go_back
        if self.dialog == "timeout":
            cur = s.get_int("system", "screen_off_timeout", 30000)
            r = ui.dialog_rect(1240)
            body = []
            y = r[1] + ui.px(150)
            for label, ms in TIMEOUTS:
                def pick(ms: int = ms) -> None:
                    s.put("system", "screen_off_timeout", str(ms))
                    self.dialog = None
                body.append(ui.radio((r[0] + ui.px(40), y, r[2] - ui.px(40), y + ui.px(150)), label, cur == ms,
                                     pick, rid="android:id/text1"))
                y += ui.px(150)
            return ui.dialog(r, "Screen timeout", body, [("Cancel", "android:id/button2", close)])
        if self.dialog == "brightness":
            cur = s.get_int("system", "screen_brightness", 128)
            r = ui.dialog_rect(560)

            def step(d: int) -> None:
                v = s.get_int("system", "screen_brightness", 128)
                if d > 0:
                    nxt = next((lv for lv in BRIGHTNESS_LEVELS if lv > v), 255)
                else:
                    nxt = next((lv for lv in reversed(BRIGHTNESS_LEVELS) if lv < v), 0)
                s.put("system", "screen_brightness", str(nxt))

            y = r[1] + ui.px(170)
            bw = ui.px(160)
            body = [
                ui.icon_button((r[0] + ui.px(60), y, r[0] + ui.px(60) + bw, y + ui.px(160)), "Decrease brightness",
                               "minus", lambda: step(-1), rid="brightness_down"),
                ui.text((r[0] + ui.px(240), y, r[2] - ui.px(240), y + ui.px(160)),
                        f"{brightness_percent(cur)}%", size=60, align="center", rid="brightness_value"),
                ui.icon_button((r[2] - ui.px(60) - bw, y, r[2] - ui.px(60), y + ui.px(160)), "Increase brightness",
                               "plus", lambda: step(1), rid="brightness_up"),
            ]
            return ui.dialog(r, "Brightness level", body, [("Done", "android:id/button1", close)])
        # device name
        r = ui.dialog_rect(560, y_center=0.3)

        def save() -> None:
            name = self.field("device_name").strip()
            if name:
                s.put("global", "device_name", name)
            self.dialog = None
            self.clear_focus()

        body = [ui.edit((r[0] + ui.px(60), r[1] + ui.px(170), r[2] - ui.px(60), r[1] + ui.px(320)), "device_name",
                        "Device name", rid="device_name_input")]
        return ui.dialog(r, "Device name", body, [("Cancel", "android:id/button2", close),
                                                  ("OK", "android:id/button1", save)])

    def on_enter(self, key: str) -> None:
        self.clear_focus()

    def snapshot(self) -> dict[str, object]:
        return {"screen": self.screen, "dialog": self.dialog}
