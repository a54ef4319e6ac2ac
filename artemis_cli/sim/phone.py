"""SimPhone: the simulated Android phone implementing artemis_cli.device.protocol.Device."""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from typing import Any

from PIL import Image

from artemis_cli.device.protocol import KEY_NAMES, DeviceInfo
from artemis_cli.errors import DeviceOffline, HierarchyError, ScreenshotError, ShellError, UsageError
from artemis_cli.sim import widgets as W
from artemis_cli.sim.faults import IDLE_STATE_MSG, NULL_ROOT_MSG, FaultInjector, parse_faults
from artemis_cli.sim.hierarchy_xml import dump
from artemis_cli.sim.keyboard import KeyboardState, keyboard_top, layout
from artemis_cli.sim.popup import PopupSchedule, popup_window
from artemis_cli.sim.render import encode_png, render
from artemis_cli.sim.shell import Shell, ShellResult
from artemis_cli.sim.system import SettingsStore, VirtualClock
from artemis_cli.sim.vfs import VirtualFS
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds import LAUNCHER, SYSTEMUI, WORLDS
from artemis_cli.sim.worlds.base import App, AppContext, Row

SWIPE_MIN = 100  # px of vertical travel for a swipe to scroll
TAP_SLOP = 10  # px: a "swipe" shorter than this is a tap (or a long press when >= 500 ms)
PROVIDERS = {"com.android.contacts": "com.android.contacts", "com.android.deskclock": "com.android.deskclock",
             "com.artemis.notes": "com.artemis.notes", "com.artemis.shop": "com.artemis.shop"}


class SimPhone:
    """A deterministic virtual phone: same world, seed and actions give byte-identical screens."""

    def __init__(self, world: str = "default", seed: int = 0, width: int = 1080, height: int = 2400,
                 faults: str | None = None, popups: bool = True, shop_password: str | None = None,
                 shop_password_env: str | None = None) -> None:
        """``shop_password`` replaces the Shop's demo password; ``shop_password_env`` names the
        environment variable holding it (the task option: a session stores the name, never the
        password, SPEC §5 invariant 5)."""
        if shop_password_env is not None:
            if shop_password is not None:
                raise UsageError("give the sim's shop password or the variable holding it, not both")
            shop_password = os.environ.get(shop_password_env)
            if not shop_password:
                raise UsageError(f"the sim's shop password comes from ${shop_password_env}, which is not set",
                                 hint=f"export {shop_password_env}=<password> (the task's sim.shop_password_env)")
        if shop_password is not None and not shop_password:
            raise UsageError("the sim's shop password must not be empty")
        if world not in WORLDS:
            raise UsageError(f"unknown sim world {world!r}", hint=f"worlds: {', '.join(sorted(WORLDS))}")
        if not (200 <= width <= 4000 and 300 <= height <= 6000):
            raise UsageError(f"unsupported sim screen size {width}x{height}")
        self.world = world
        self.seed = seed
        self.width, self.height = width, height
        wd = WORLDS[world]
        self.opts = wd.layout
        self.settings = SettingsStore()
        self.clock = VirtualClock(seed=seed)
        self.fs = VirtualFS()
        spec = parse_faults(faults)
        self.faults = FaultInjector(spec, seed)
        self.popups = PopupSchedule(seed, enabled=popups, storm=spec.popup_storm and popups)
        ctx = AppContext(width, height, seed, self.opts, self.settings, self.clock, self._launch_from_app,
                         shop_password=shop_password)
        self.apps: dict[str, App] = wd.create_apps(ctx)
        self.foreground = LAUNCHER
        self.popup_visible = False
        self.kb = KeyboardState()
        self.ignored: list[str] = []
        self.actions = 0
        self.closed = False
        self.sh = Shell(self)
        self._version = 0
        self._built: tuple[int, list[Window]] | None = None
        self._xml: tuple[int, str] | None = None
        self._png: OrderedDict[str, bytes] = OrderedDict()

    # ==== Device protocol ========================================================================
    def info(self) -> DeviceInfo:
        serial = "sim" if self.world == "default" else f"sim:{self.world}"
        return DeviceInfo(serial=serial, kind="sim", model="Artemis Sim", width=self.width, height=self.height,
                          sdk=34)

    def screenshot(self) -> bytes:
        self._enter()
        if self.faults.screencap_fails():
            raise ScreenshotError("screencap failed (simulated)", hint="retry the screenshot")
        return self.render_png()

    def hierarchy(self) -> str:
        self._enter()
        fault = self.faults.dump_fault()
        if fault == "idle_state":
            raise HierarchyError(IDLE_STATE_MSG)
        if fault == "null_root":
            raise HierarchyError(NULL_ROOT_MSG)
        if fault == "stale_dump":
            raise HierarchyError("stale window dump: the dump file was not rewritten")
        if fault is not None:  # garbage_xml / empty_hierarchy: a "successful" dump with bad content
            return self.faults.faulty_content(fault, self.dump_xml())
        return self.dump_xml()

    def tap(self, x: int, y: int) -> None:
        self._enter()
        self.do_tap(x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._enter()
        self.do_long_press(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._enter()
        self.do_swipe(x1, y1, x2, y2, duration_ms)

    def type_text(self, text: str) -> None:
        self._enter()
        self.do_type(text)

    def key(self, name: str) -> None:
        self._enter()
        if name.lower() not in KEY_NAMES:
            raise UsageError(f"unknown key {name!r}", hint=f"keys: {', '.join(KEY_NAMES)}")
        self.do_key(name.lower())

    def launch(self, package: str) -> None:
        self._enter()
        if not self.has_package(package):
            raise ShellError(f"cannot launch {package!r}: no such package on the sim",
                             hint=f"installed apps: {', '.join(self.packages())}")
        self.do_launch(package)

    def current_app(self) -> str | None:
        self._enter()
        return self.current_package()

    def shell(self, command: str) -> str:
        return self.shell_bytes(command).decode("utf-8", "replace")

    def shell_bytes(self, command: str) -> bytes:
        self._enter()
        if not isinstance(command, str):
            raise ShellError(f"shell command must be a string, got {type(command).__name__}")
        return self.sh.run(command).output

    def run(self, command: str) -> ShellResult:
        """Shell with the exit code (for the adbd server); no device-call faults."""
        return self.sh.run(command)

    def close(self) -> None:
        self.closed = True

    # ==== files (adb push/pull) ====================================================================
    def read_file(self, path: str) -> bytes:
        return self.fs.read_file(path)

    def write_file(self, path: str, data: bytes) -> None:
        self.fs.now = self.clock.epoch_s()
        self.fs.write_file(path, data)

    # ==== observation ==============================================================================
    def windows(self) -> list[Window]:
        if self._built is not None and self._built[0] == self._version:
            return self._built[1]
        app = self.apps[self.foreground]
        wins = [self._status_bar(), *app.build(app.ui())]
        st = app.ui_state
        if st.focus is not None and not any(w.focused for win in wins for w in win.root.walk()):
            st.focus = None
        if self.popup_visible:
            wins.append(popup_window(self.width, self.height, self.opts, self._dismiss_popup, self._view_offer))
        self._built = (self._version, wins)
        return wins

    def keyboard_visible(self) -> bool:
        return self.apps[self.foreground].ui_state.focus is not None and not self.popup_visible

    def dump_xml(self) -> str:
        if self._xml is not None and self._xml[0] == self._version:
            return self._xml[1]
        xml = dump(self.windows())
        self._xml = (self._version, xml)
        return xml

    def _render_key(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        h.update(self.dump_xml().encode())
        for win in self.windows():
            for w in win.root.walk():
                h.update(f"{w.kind}|{w.frame}|{w.display}|{w.color}|{w.size}|{w.align};".encode())
        h.update(f"{self.keyboard_visible()}|{self.kb}|{self._dark()}".encode())
        return h.hexdigest()

    def render_image(self) -> Image.Image:
        keys = layout(self.width, self.height, self.kb) if self.keyboard_visible() else None
        return render(self.windows(), self.width, self.height, dark=self._dark(), keys=keys)

    def render_png(self) -> bytes:
        key = self._render_key()
        png = self._png.get(key)
        if png is None:
            png = encode_png(self.render_image())
            self._png[key] = png
            if len(self._png) > 64:
                self._png.popitem(last=False)
        else:
            self._png.move_to_end(key)
        return png

    def _dark(self) -> bool:
        return self.settings.get("secure", "ui_night_mode") == "2"

    def _status_bar(self) -> Window:
        sb = round(self.opts.status_bar * self.width / 1080)
        s = self.width / 1080
        pad = round(48 * s)
        radio = "Airplane mode" if self.settings.flag("global", "airplane_mode_on") else (
            "Wi-Fi" if self.settings.flag("global", "wifi_on") else "No Wi-Fi")
        kids = [
            Widget(W.TEXT_VIEW, (pad, 0, pad + round(200 * s), sb), text=self.clock.hhmm(),
                   rid="com.android.systemui:id/clock", kind="text", size=round(38 * s), color="status_text"),
            Widget(W.TEXT_VIEW, (self.width - pad - round(420 * s), 0, self.width - pad - round(130 * s), sb),
                   text=radio, desc=radio, rid="com.android.systemui:id/connectivity", kind="text",
                   size=round(32 * s), color="status_text", align="center"),
            Widget(W.TEXT_VIEW, (self.width - pad - round(120 * s), 0, self.width - pad, sb), text="100%",
                   desc="Battery 100 percent.", rid="com.android.systemui:id/battery_percentage", kind="text",
                   size=round(34 * s), color="status_text", align="center"),
        ]
        root = Widget(W.FRAME, (0, 0, self.width, sb), rid="com.android.systemui:id/status_bar", children=kids,
                      kind="statusbar")
        return Window(SYSTEMUI, root)

    # ==== input ====================================================================================
    def do_tap(self, x: int, y: int) -> None:
        if not (0 <= x < self.width and 0 <= y < self.height):
            self.note_ignored(f"tap {x},{y} outside the screen")
            return
        if self.keyboard_visible() and y >= keyboard_top(self.width, self.height):
            self._keyboard_tap(x, y)
            self._after_action()
            return
        target = self._hit(x, y)
        if target is not None and target.enabled and target.on_tap is not None:
            target.on_tap()
        self._after_action()

    def do_long_press(self, x: int, y: int) -> None:
        target = self._hit(x, y) if 0 <= x < self.width and 0 <= y < self.height else None
        if target is not None and target.enabled:
            if target.on_long is not None:
                target.on_long()
            elif target.field_key is not None and target.on_tap is not None:
                target.on_tap()  # long-press on a text field focuses it
        self._after_action()

    def do_swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        if abs(x2 - x1) <= TAP_SLOP and abs(y2 - y1) <= TAP_SLOP:
            if duration_ms >= 500:
                self.do_long_press(x1, y1)
            else:
                self.do_tap(x1, y1)
            return
        dy = y1 - y2
        if abs(dy) >= SWIPE_MIN and abs(dy) >= abs(x2 - x1):
            win = self._window_at(x1, y1)
            target = W.scroll_target(win.root, x1, y1) if win is not None else None
            if target is not None and target.on_scroll is not None:
                target.on_scroll(dy)
            else:
                self.note_ignored(f"swipe from {x1},{y1}: nothing scrollable there")
        else:
            self.note_ignored(f"swipe {x1},{y1}->{x2},{y2}: too short or horizontal")
        self._after_action()

    def do_type(self, text: str) -> None:
        app = self.apps[self.foreground]
        st = app.ui_state
        if st.focus is None or self.popup_visible:
            self.note_ignored(f"type_text {text!r}: no focused text field")
            self._after_action()
            return
        parts = text.split("\n")
        for i, part in enumerate(parts):
            clean = "".join(ch for ch in part if ch == "\t" or ord(ch) >= 32).replace("\t", " ")
            if st.focus is None:
                break
            if clean:
                old = "" if st.replace_next else st.fields.get(st.focus, "")
                st.fields[st.focus] = old + clean
                st.replace_next = False
            if i < len(parts) - 1 and st.focus is not None:
                app.on_enter(st.focus)
        self._after_action()

    def do_key(self, name: str) -> None:
        app = self.apps[self.foreground]
        st = app.ui_state
        if name == "back":
            if self.popup_visible:
                self.popup_visible = False
            elif self.keyboard_visible():
                st.focus = None
            elif not app.back() and self.foreground != LAUNCHER:
                self.foreground = LAUNCHER
        elif name in ("home", "recents"):  # recents: the sim has no overview screen, it goes home
            st.focus = None
            self.popup_visible = False
            self.foreground = LAUNCHER
        elif name == "enter":
            if st.focus is not None and not self.popup_visible:
                app.on_enter(st.focus)
            else:
                self.note_ignored("enter: no focused text field")
        elif name == "delete":
            if st.focus is not None and not self.popup_visible:
                st.fields[st.focus] = st.fields.get(st.focus, "")[:-1]
                st.replace_next = False
            else:
                self.note_ignored("delete: no focused text field")
        else:
            self.note_ignored(f"key {name}: no effect in the sim")
        self._after_action()

    def do_launch(self, package: str, *, screen: str | None = None) -> None:
        self._switch_to(package)
        if screen is not None:
            app = self.apps[package]
            stack = getattr(app, "stack", None)
            if isinstance(stack, list):
                stack[:] = ["main", screen]
        self._after_action()

    def force_stop(self, package: str) -> None:
        app = self.apps.get(package)
        if app is None or package == LAUNCHER:
            return
        app.reset_ui()
        if self.foreground == package:
            self.foreground = LAUNCHER
            self.popup_visible = False
        self.invalidate()

    def _launch_from_app(self, package: str) -> None:
        self._switch_to(package)

    def _switch_to(self, package: str) -> None:
        cur = self.apps[self.foreground]
        cur.ui_state.focus = None
        self.foreground = package if package in self.apps else LAUNCHER
        self.invalidate()

    def _hit(self, x: int, y: int) -> Widget | None:
        win = self._window_at(x, y)
        return W.hit(win.root, x, y) if win is not None else None

    def _window_at(self, x: int, y: int) -> Window | None:
        for win in reversed(self.windows()):
            if W.contains(win.root.bounds, x, y):
                return win
            if win.modal:
                return None  # a dialog is modal: touches outside it are swallowed
        return None

    def _keyboard_tap(self, x: int, y: int) -> None:
        for key in layout(self.width, self.height, self.kb):
            if W.contains(key.rect, x, y):
                a = key.action
                if a == "shift":
                    self.kb.shift = not self.kb.shift
                elif a == "mode":
                    self.kb.symbols = not self.kb.symbols
                elif a == "delete":
                    self.do_key("delete")
                    self.actions -= 1  # counted once by the caller
                elif a == "enter":
                    self.do_key("enter")
                    self.actions -= 1
                else:
                    self._insert(" " if a == "space" else a)
                    self.kb.shift = False
                return

    def _insert(self, text: str) -> None:
        st = self.apps[self.foreground].ui_state
        if st.focus is not None:
            old = "" if st.replace_next else st.fields.get(st.focus, "")
            st.fields[st.focus] = old + text
            st.replace_next = False

    def _dismiss_popup(self) -> None:
        self.popup_visible = False

    def _view_offer(self) -> None:
        self.popup_visible = False
        self._switch_to("com.artemis.shop")

    def _after_action(self) -> None:
        self.actions += 1
        self.clock.actions = self.actions
        self.invalidate()
        if self.popups.after_action(self.foreground, visible=self.popup_visible):
            self.popup_visible = True
            self.apps[self.foreground].ui_state.focus = None
            self.invalidate()

    def note_ignored(self, what: str) -> None:
        self.ignored.append(what)
        del self.ignored[:-50]

    def invalidate(self) -> None:
        self._version += 1

    def _enter(self) -> None:
        if self.closed:
            raise DeviceOffline("sim device is closed")
        self.faults.device_call()

    # ==== queries ==================================================================================
    def packages(self) -> list[str]:
        return list(self.apps)

    def has_package(self, package: str) -> bool:
        return package in self.apps

    def current_package(self) -> str:
        return self.foreground

    def provider_rows(self, authority: str, table: str) -> list[Row] | None:
        if authority == "settings" and table in self.settings.values:
            return [{"_id": i + 1, "name": k, "value": v}
                    for i, (k, v) in enumerate(sorted(self.settings.values[table].items()))]
        pkg = PROVIDERS.get(authority)
        if pkg is None or pkg not in self.apps:
            return None
        return self.apps[pkg].query(table)

    def snapshot_state(self) -> dict[str, Any]:
        app = self.apps[self.foreground]
        return {
            "world": self.world, "seed": self.seed, "foreground": self.foreground, "actions": self.actions,
            "clock": self.clock.hhmm(), "popup_visible": self.popup_visible, "popups_shown": self.popups.shown,
            "focus": app.ui_state.focus, "keyboard": self.keyboard_visible(),
            "ignored_inputs": list(self.ignored), "faults": list(self.faults.log),
            "settings": {ns: dict(kv) for ns, kv in self.settings.values.items()},
            "apps": {pkg: {"ui": a.snapshot(), "fields": dict(a.ui_state.fields),
                           "scroll": dict(a.ui_state.scroll)} for pkg, a in self.apps.items()},
            "files": sorted(self.fs.files),
        }
