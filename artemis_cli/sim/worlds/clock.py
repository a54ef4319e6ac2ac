"""Clock (com.android.deskclock): alarm list, add/edit alarm with a tap-only time picker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial

from artemis_cli.sim import widgets as W
from artemis_cli.sim.layout import Ui
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds.base import App, AppContext, Row


@dataclass
class Alarm:
    id: int
    hour: int  # 0..23
    minute: int
    enabled: bool = True
    label: str = ""

    @property
    def time(self) -> str:
        return format_time(self.hour, self.minute)


def format_time(hour: int, minute: int) -> str:
    h12 = hour % 12 or 12
    return f"{h12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def to_24h(h12: int, pm: bool) -> int:
    return (h12 % 12) + (12 if pm else 0)


class ClockApp(App):
    package = "com.android.deskclock"
    label = "Clock"

    def __init__(self, ctx: AppContext) -> None:
        self.alarms: list[Alarm] = [Alarm(1, 7, 30, True, "Wake up"), Alarm(2, 21, 0, False, "Bedtime")]
        self.next_id = 3
        super().__init__(ctx)

    def reset_ui(self) -> None:
        super().reset_ui()
        self.tab = "alarm"
        self.editing: int | None = None  # alarm id, 0 = new alarm, None = picker closed

    def back(self) -> bool:
        if self.editing is not None:
            self.editing = None
            self.clear_focus()
            return True
        if self.tab != "alarm":
            self.tab = "alarm"
            return True
        return False

    # -- actions ------------------------------------------------------------------------------
    def open_picker(self, alarm: Alarm | None) -> None:
        a = alarm or Alarm(0, 8, 0, True, "")
        self.editing = a.id
        self.error = ""
        self.set_fields(hour=str(a.hour % 12 or 12), minute=f"{a.minute:02d}", label=a.label,
                        ampm="PM" if a.hour >= 12 else "AM")

    def bump(self, key: str, d: int) -> None:
        f = self.ui_state.fields
        try:
            v = int(f.get(key, "0") or "0")
        except ValueError:
            v = 0
        if key == "hour":
            v = (v - 1 + d) % 12 + 1
            f[key] = str(v)
        else:
            f[key] = f"{(v + d) % 60:02d}"

    def confirm(self) -> None:
        f = self.ui_state.fields
        try:
            h, m = int(f.get("hour", "")), int(f.get("minute", ""))
        except ValueError:
            h, m = -1, -1
        if not (1 <= h <= 12 and 0 <= m <= 59):
            self.error = "Enter a valid time"
            return
        hour = to_24h(h, f.get("ampm") == "PM")
        label = f.get("label", "").strip()
        if self.editing:
            for a in self.alarms:
                if a.id == self.editing:
                    a.hour, a.minute, a.label, a.enabled = hour, m, label, True
        else:
            self.alarms.append(Alarm(self.next_id, hour, m, True, label))
            self.next_id += 1
        self.editing = None
        self.error = ""
        self.clear_focus()

    def delete(self, alarm_id: int) -> None:
        self.alarms = [a for a in self.alarms if a.id != alarm_id]

    def sorted_alarms(self) -> list[Alarm]:
        return sorted(self.alarms, key=lambda a: (a.hour, a.minute, a.id))

    # -- screens ------------------------------------------------------------------------------
    def build(self, ui: Ui) -> list[Window]:
        bar = ui.app_bar("Clock")
        t = ui.content_top
        th = ui.px(140)
        tabs = []
        for i, (name, key) in enumerate([("Alarm", "alarm"), ("Clock", "clock")]):
            x0, x1 = i * ui.w // 2, (i + 1) * ui.w // 2
            tabs.append(Widget(W.TEXT_VIEW, (x0, t, x1, t + th), text=name, desc=name, rid=ui.rid("tab_" + key),
                               clickable=True, focusable=True, selected=self.tab == key, kind="tab",
                               size=ui.px(44), align="center", on_tap=partial(self._tab, key)))
        tabbar = Widget(W.LINEAR, (0, t, ui.w, t + th), rid=ui.rid("tabs"), children=tabs)
        kids: list[Widget] = [bar, tabbar]
        if self.tab == "alarm":
            rh = ui.px(300)
            rows: list[tuple[int, Callable[[int], Widget]]] = []
            for a in self.sorted_alarms():
                rows.append((rh, partial(self.alarm_row, ui, h=rh, a=a)))
            if not rows:
                kids.append(ui.text((0, t + th + ui.px(100), ui.w, t + th + ui.px(220)), "No alarms",
                                    align="center", color="muted", rid="alarms_empty_view"))
            kids.append(ui.vlist((0, t + th, ui.w, ui.h), "alarms", rows, rid="alarm_recycler_view",
                                 bottom_pad=ui.fab_clearance))
            kids.append(ui.fab("Add alarm", lambda: self.open_picker(None)))
        else:
            kids.append(ui.text((0, t + th + ui.px(200), ui.w, t + th + ui.px(420)), self.ctx.clock.hhmm(),
                                size=160, align="center", rid="digital_clock"))
            kids.append(ui.text((0, t + th + ui.px(440), ui.w, t + th + ui.px(540)), "Mon, Jun 3",
                                size=48, align="center", color="muted", rid="date"))
        wins = [self.window(ui, kids)]
        if self.editing is not None:
            wins.append(self.dialog_window(self.picker(ui)))
        return wins

    def _tab(self, key: str) -> None:
        self.tab = key

    def alarm_row(self, ui: Ui, y: int, h: int, a: Alarm) -> Widget:
        pad = ui.px(48)
        kids = [
            Widget(W.TEXT_VIEW, (pad, y + ui.px(24), ui.px(640), y + ui.px(150)), text=a.time,
                   rid=ui.rid("digital_clock"), clickable=True, focusable=True, kind="text", size=ui.px(84),
                   color="text" if a.enabled else "muted", on_tap=lambda: self.open_picker(a)),
            ui.text((pad, y + ui.px(160), ui.px(640), y + ui.px(270)), a.label or "Alarm", size=40,
                    rid="label", color="muted"),
            ui.switch((ui.w - pad - ui.px(140), y + ui.px(45), ui.w - pad, y + ui.px(129)), a.enabled,
                      lambda: self._flip(a), rid="onoff", desc=f"{a.time} alarm"),
            ui.button((ui.w - pad - ui.px(260), y + ui.px(165), ui.w - pad, y + ui.px(265)), "Delete",
                      lambda: self.delete(a.id), rid="delete", desc="Delete alarm", flat=True, size=38),
        ]
        return Widget(W.VIEW_GROUP, (0, y, ui.w, y + h), rid=ui.rid("alarm_item"), children=kids, kind="row")

    def _flip(self, a: Alarm) -> None:
        a.enabled = not a.enabled

    def picker(self, ui: Ui) -> Widget:
        r = ui.dialog_rect(1000, y_center=0.36)
        x0, y0 = r[0], r[1]

        def at(a: int, b: int, c: int, d: int) -> tuple[int, int, int, int]:
            return (x0 + ui.px(a), y0 + ui.px(b), x0 + ui.px(c), y0 + ui.px(d))

        f = self.ui_state.fields
        pm = f.get("ampm") == "PM"
        body = [
            ui.icon_button(at(40, 170, 160, 330), "Decrease hour", "minus", lambda: self.bump("hour", -1),
                           rid="hour_down"),
            ui.edit(at(170, 170, 340, 330), "hour", "h", rid="hour", replace_on_focus=True, size=64),
            ui.icon_button(at(350, 170, 470, 330), "Increase hour", "plus", lambda: self.bump("hour", 1),
                           rid="hour_up"),
            ui.text(at(470, 170, 490, 330), ":", size=64, align="center"),
            ui.icon_button(at(490, 170, 610, 330), "Decrease minute", "minus", lambda: self.bump("minute", -1),
                           rid="minute_down"),
            ui.edit(at(620, 170, 790, 330), "minute", "mm", rid="minute", replace_on_focus=True, size=64),
            ui.icon_button(at(800, 170, 920, 330), "Increase minute", "plus", lambda: self.bump("minute", 1),
                           rid="minute_up"),
            ui.radio(at(40, 370, 440, 500), "AM", not pm, lambda: f.update(ampm="AM"), rid="am_label"),
            ui.radio(at(480, 370, 880, 500), "PM", pm, lambda: f.update(ampm="PM"), rid="pm_label"),
            ui.edit(at(40, 540, 920, 690), "label", "Label", rid="label_input"),
        ]
        if self.error:
            body.append(ui.text(at(40, 710, 920, 800), self.error, size=40, color="error", rid="error"))
        return ui.dialog(r, "Set alarm", body, [("Cancel", "android:id/button2", self.go_back),
                                                ("OK", "android:id/button1", self.confirm)])

    def on_enter(self, key: str) -> None:
        self.clear_focus()

    def query(self, table: str) -> list[Row] | None:
        if table != "alarms":
            return None
        return [{"_id": a.id, "hour": a.hour, "minutes": a.minute, "enabled": int(a.enabled), "label": a.label,
                 "time": a.time} for a in self.sorted_alarms()]

    def snapshot(self) -> dict[str, object]:
        return {"tab": self.tab, "editing": self.editing, "alarms": [asdict(a) for a in self.alarms]}
