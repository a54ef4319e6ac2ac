"""SimPhone: the simulated Android phone implementing artemis_cli.device.protocol.Device."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PIL import Image

from artemis_cli.device.protocol import KEY_NAMES, DeviceInfo
from artemis_cli.errors import DeviceOffline, HierarchyError, ScreenshotError, ShellError, UsageError
from artemis_cli.perception.bytecache import MB, ByteLRU
from artemis_cli.perception.logcat import LogEvents, LogWatch
from artemis_cli.perception.packages import read_package_file
from artemis_cli.perception.screenshot import Screenshot, without_pixels
from artemis_cli.sim import widgets as W
from artemis_cli.sim.activities import ActivityState, launch_activity
from artemis_cli.sim.app_errors import AppErrors
from artemis_cli.sim.display import Display, with_rotation
from artemis_cli.sim.faults import IDLE_STATE_MSG, NULL_ROOT_MSG, FaultInjector, parse_faults
from artemis_cli.sim.gestures import CALL_GAP_MS, DOUBLE_TAP_GAP_MS, TapTracker, TouchClock
from artemis_cli.sim.hierarchy_xml import dump, dump_u2, window_order
from artemis_cli.sim.keyboard import KeyboardState, keyboard_top, layout
from artemis_cli.sim.keyguard import Keyguard
from artemis_cli.sim.logbuf import LogBuffers
from artemis_cli.sim.packages import CORE_PACKAGES as SYSTEM_PACKAGES
from artemis_cli.sim.packages import PackageState
from artemis_cli.sim.permissions import Permissions
from artemis_cli.sim.popup import PopupSchedule, popup_window
from artemis_cli.sim.processes import SHELL_UID, ActivityManager
from artemis_cli.sim.render import encode_png, render
from artemis_cli.sim.shade import Shade
from artemis_cli.sim.shell import Shell, ShellResult
from artemis_cli.sim.system import SettingsStore, VirtualClock
from artemis_cli.sim.sysui import IME_PACKAGE, SYSTEMUI, ime_window, nav_bar, nav_bar_height, status_bar
from artemis_cli.sim.vfs import VirtualFS
from artemis_cli.sim.widgets import Widget, Window
from artemis_cli.sim.worlds import LAUNCHER, WORLDS
from artemis_cli.sim.worlds.base import App, AppContext, Row
from artemis_cli.sim.worlds.stub import StubApp

SWIPE_MIN = 100  # px of vertical travel for a swipe to scroll
TAP_SLOP = 10  # px: a "swipe" shorter than this is a tap (or a long press when >= 500 ms)
PROVIDERS = {"com.android.contacts": "com.android.contacts", "com.android.deskclock": "com.android.deskclock",
             "com.artemis.notes": "com.artemis.notes", "com.artemis.shop": "com.artemis.shop"}


class SimPhone:
    """A deterministic virtual phone: same world, seed and actions give byte-identical screens."""

    def __init__(self, world: str = "default", seed: int = 0, width: int = 1080, height: int = 2400,
                 faults: str | None = None, popups: bool = True, shop_password: str | None = None,
                 shop_password_env: str | None = None, shuffle_windows: bool = True,
                 packages: str | Path | None = None, permission_prompts: bool = False,
                 locked: bool = False) -> None:
        """``shop_password`` replaces the Shop's demo password; ``shop_password_env`` names the
        environment variable holding it (the task option: a session stores the name, never the
        password, SPEC §5 invariant 5).  ``shuffle_windows=False``: uiautomator2 dumps list the
        windows in drawing order instead of the seeded order (:meth:`u2_dump`).  ``packages``: a
        saved ``adb shell pm list packages`` output (a real phone's); each of its packages is
        installed as a stub app (``worlds/stub.py``) beside the world's own apps.
        ``permission_prompts``: apps ask for their runtime permissions on launch (sim/permissions.py);
        on for every task and ``artemis sim serve`` (``SimOptions.permission_prompts``), off for a
        bare ``SimPhone()``.  ``locked``: the phone starts on the lock screen (sim/keyguard.py)."""
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
        self._shop_password = shop_password
        self.world = world
        self.seed = seed
        self.shuffle_windows = shuffle_windows
        self.display = Display(width, height)  # physical size, wm overrides, rotation (sim/display.py)
        self.width, self.height = width, height  # the logical display: _sync_display keeps them
        # Apps lay out above the 3-button navigation bar (a non-edge-to-edge app on Android 14).
        self.app_height = height - nav_bar_height(width, height)
        wd = WORLDS[world]
        self.opts = wd.layout
        self.settings = SettingsStore()
        self.clock = VirtualClock(seed=seed)
        self.fs = VirtualFS()
        spec = parse_faults(faults)
        self.faults = FaultInjector(spec, seed)
        self.popups = PopupSchedule(seed, enabled=popups, storm=spec.popup_storm and popups)
        ctx = AppContext(width, self.app_height, seed, self.opts, self.settings, self.clock, self._launch_from_app,
                         shop_password=shop_password)
        self._ctx = ctx
        self.apps: dict[str, App] = wd.create_apps(ctx)
        self._packages_file = packages
        for package in read_package_file(packages) if packages is not None else ():
            if package not in self.apps and package not in SYSTEM_PACKAGES:
                self.apps[package] = StubApp(ctx, package)
        self.foreground = LAUNCHER
        self.activities = ActivityState(top={LAUNCHER: launch_activity(LAUNCHER)})
        self.pm_state = PackageState()
        self.popup_visible = False
        self.shade = Shade()  # the notification shade System UI pulls down (sim/shade.py)
        self.kb = KeyboardState()
        self.ignored: list[str] = []
        self.actions = 0
        self.touch = TouchClock()  # when each tap lands (sim/gestures.py): a double tap or two taps
        self.taps = TapTracker()
        self._batch = 0  # > 0 inside one_action(): inputs count as one action at its end
        self._batched = False
        self.closed = False
        self.screen_on = True
        self.boots = 1
        self._boot_processes()
        self.errors = AppErrors(self)  # a crash's or an ANR's dialog (sim/app_errors.py)
        self.permissions = Permissions(self, enabled=permission_prompts, granted_=self.pm_state.granted)  # one grant store (pm's)
        self.keyguard = Keyguard(self, locked)  # the lock screen (sim/keyguard.py)
        self.sh = Shell(self)
        self._version = 0
        self._built: tuple[int, list[Window]] | None = None
        self._xml: tuple[int, str] | None = None
        self.u2_dumps = 0  # uiautomator2-style dumps served so far: numbers each dump's window order
        #: PNGs of screens drawn before, by what was drawn. Bound: 4 MB of PNG, ~200 sim screens
        #: of ~20 KB (plain bytes: no pictures kept).
        self._png: ByteLRU[str, bytes] = ByteLRU("sim.screen_pngs", 4 * MB)
        self._logs = LogWatch(lambda command: self.run(command).output.decode("utf-8", "replace"))

    # ==== Device protocol ========================================================================

    def reset_to(self, world: str, seed: int, popups: bool, *, locked: bool | None = None,
                 permission_prompts: bool | None = None) -> None:
        """Start over as a fresh phone of ``world`` with ``seed`` (what a task's ``sim:`` settings
        ask for), keeping the screen size, the shop password and the fault injector: a served
        sim (``artemis sim serve``) runs one task after another this way, as a real phone would be
        wiped between runs. ``artemis-sim reset`` in the sim's shell calls it."""
        faults = self.faults
        type(self).__init__(self, world=world, seed=seed, width=self.display.phys_w, height=self.display.phys_h,
                            popups=popups,
                            shop_password=self._shop_password, shuffle_windows=self.shuffle_windows,
                            packages=self._packages_file,
                            permission_prompts=self.permissions.enabled if permission_prompts is None
                            else permission_prompts,
                            locked=self.keyguard.enabled if locked is None else locked)
        self.faults = faults

    def _boot_processes(self) -> None:
        """A fresh process table and log (sim/processes.py, sim/logbuf.py), seeded by boot."""
        from artemis_cli.sim.packages import uid_of  # one uid per package: the package manager's

        self.logs = LogBuffers(self.clock, self.seed if self.boots == 1 else self.seed * 1000 + self.boots)
        self.am = ActivityManager(f"{self.seed}|{self.boots}", self.logs, uid_of)

    def info(self) -> DeviceInfo:
        serial = "sim" if self.world == "default" else f"sim:{self.world}"
        self._sync_display()
        return DeviceInfo(serial=serial, kind="sim", model="Artemis Sim", width=self.width, height=self.height,
                          sdk=34)

    def rotation(self) -> int:
        """The display rotation 0-3 (Surface.ROTATION_*), from the settings (sim/display.py)."""
        return self.display.rotation(self.settings)

    def _sync_display(self) -> None:
        """Take the logical display size the settings and ``wm size`` ask for: the apps, the bars
        and the keyboard lay out again in it (every change goes through :meth:`invalidate`)."""
        w, h = self.display.logical(self.settings)
        if (w, h) != (self.width, self.height):
            self.width, self.height = w, h
            self.app_height = h - nav_bar_height(w, h)
            self._ctx.width, self._ctx.height = w, self.app_height
            self._version += 1

    def screenshot(self) -> bytes:
        self._enter()
        if self.faults.screencap_fails():
            raise ScreenshotError("screencap failed (simulated)", hint="retry the screenshot")
        return self.capture()

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
            return self.faults.faulty_content(fault, self.u2_dump())
        return self.u2_dump()

    def tap(self, x: int, y: int) -> None:
        self._enter()
        self.do_tap(x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._enter()
        self.do_long_press(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._enter()
        self.do_swipe(x1, y1, x2, y2, duration_ms)

    def double_tap(self, x: int, y: int) -> None:
        self._enter()
        self.do_double_tap(x, y)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        self._enter()
        self.do_drag(x1, y1, x2, y2)

    def type_text(self, text: str) -> None:
        self._enter()
        self.do_type(text)

    def clear_text(self, length: int) -> None:
        self._enter()
        self.do_clear()

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

    def log_events(self) -> LogEvents:
        """Error lines (crashes, ANRs) logged since the last call, read with the phone's own
        ``logcat`` (perception/logcat.py); cheap: no device-call faults, no latency."""
        return self._logs.read()

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
        """Every window on screen in drawing order, bottom to top: the app's (its screen, then a
        dialog), the promotion pop-up, the keyboard (IME) when shown, the status bar and the
        navigation bar."""
        self._sync_display()
        if self._built is not None and self._built[0] == self._version:
            return self._built[1]
        app = self.apps[self.foreground]
        wins = app.build(app.ui())
        asking = self.permissions.window()
        if asking is not None:
            wins.append(asking)
        st = app.ui_state
        if st.focus is not None and not any(w.focused for win in wins for w in win.root.walk()):
            st.focus = None
        error = self.errors.window()
        if self.popup_visible:
            wins.append(popup_window(self.width, self.app_height, self.opts, self._dismiss_popup,
                                     self._view_offer))
        if error is not None:
            wins.append(error)
        lock = self.keyguard.window()
        if lock is not None:
            wins.append(lock)
        if self.keyboard_visible():
            top = keyboard_top(self.width, self.app_height)
            wins.append(ime_window(self.width, top, self.app_height, layout(self.width, self.app_height, self.kb),
                                   self.kb.symbols, self._ime_key))
        if self.shade.open:
            wins.append(self.shade.window(self.width, self.app_height, min(self.width, self.height),
                                          self.clock.hhmm(), self.settings, self.invalidate))
        wins += [self._status_bar(), nav_bar(self.width, self.height, self._nav_key)]
        self._built = (self._version, wins)
        return wins

    def active_window(self) -> Window:
        """The window with input focus: the top app-level one (a pop-up, a dialog, else the app's
        screen), or System UI's shade window when it is down or the lock screen is up; never the
        keyboard or a system bar."""
        if self.keyguard.locked or self.shade.open:  # System UI's shade window: the lock screen or the shade
            return next(w for w in reversed(self.windows())
                        if w.root.rid in ("com.android.systemui:id/notification_shade",
                                          "com.android.systemui:id/notification_panel"))
        return [w for w in self.windows() if w.package not in (SYSTEMUI, IME_PACKAGE)][-1]

    def keyboard_visible(self) -> bool:
        return (self.apps[self.foreground].ui_state.focus is not None and not self.popup_visible
                and self.errors.current is None and not self.permissions.visible() and not self.keyguard.locked)

    def dump_xml(self) -> str:
        """What the shell's ``uiautomator dump`` writes: ``getRootInActiveWindow()`` only — the
        app's screen, or the dialog / pop-up in front of it (never the bars or the keyboard), one
        line, the classic attributes (WORLD.md §1).  :meth:`u2_dump` is uiautomator2's dump."""
        if self._xml is not None and self._xml[0] == self._version:
            return self._xml[1]
        xml = with_rotation(dump([self.active_window()]), self.rotation())
        self._xml = (self._version, xml)
        return xml

    def u2_dump(self, *, active_only: bool = False) -> str:
        """What uiautomator2's ``dumpWindowHierarchy`` answers (and the in-process ``hierarchy()``):
        one top-level node per window, listed in the order of :func:`window_order` for this dump's
        number (seeded by the phone's seed, so reproducible), not in drawing order.  Each call is
        one dump: the next one may list the windows in another order."""
        self.u2_dumps += 1
        wins = self.windows()
        if active_only:
            wins = [self.active_window()]
        elif self.shuffle_windows:
            wins = [wins[i] for i in window_order(len(wins), self.seed, self.u2_dumps)]
        return with_rotation(dump_u2(wins), self.rotation())

    def _render_key(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        h.update(dump(self.windows()).encode())
        for win in self.windows():
            for w in win.root.walk():
                h.update(f"{w.kind}|{w.frame}|{w.display}|{w.color}|{w.size}|{w.align};".encode())
        h.update(f"{self.keyboard_visible()}|{self.kb}|{self._dark()}|{self.screen_on}".encode())
        return h.hexdigest()

    def render_image(self) -> Image.Image:
        self._sync_display()
        if not self.screen_on:  # the panel is off: a black frame, like screencap on a sleeping phone
            return Image.new("RGB", (self.width, self.height), (0, 0, 0))
        return render(self.windows(), self.width, self.height, dark=self._dark())

    def render_png(self) -> bytes:
        """The screen as PNG bytes (plain bytes: what ``screencap -p`` writes)."""
        return without_pixels(self.capture())

    def capture(self) -> bytes:
        """The screen as PNG bytes; a screen drawn now comes as a ``Screenshot`` that carries
        the picture it encodes (the similarity hash then needs no decode). PNGs of screens drawn
        before are kept by what was drawn (plain bytes: no pictures kept)."""
        key = self._render_key()
        png = self._png.get(key)
        if png is None:
            image = self.render_image()
            png = self._png.put(key, encode_png(image))
            return Screenshot(png, image)
        return png

    def _dark(self) -> bool:
        return self.settings.get("secure", "ui_night_mode") == "2"

    def _status_bar(self) -> Window:
        radio = "Airplane mode" if self.settings.flag("global", "airplane_mode_on") else (
            "Wi-Fi" if self.settings.flag("global", "wifi_on") else "No Wi-Fi")
        return status_bar(self.width, self._status_bar_height(), self.clock.hhmm(), radio, self.height)

    def _status_bar_height(self) -> int:
        return round(self.opts.status_bar * min(self.width, self.height) / 1080)

    # ==== input ====================================================================================
    def do_tap(self, x: int, y: int) -> None:
        if self._screen_off(f"tap {x},{y}"):
            return
        if not (0 <= x < self.width and 0 <= y < self.height):
            self.note_ignored(f"tap {x},{y} outside the screen")
            return
        if self._touch_outside_menu(x, y):
            return
        target = self._hit(x, y)  # a key of the keyboard, a navigation-bar button, a widget
        win = self._window_at(x, y)
        dbl = W.listener_at(win.root, x, y, "on_double") if win is not None else None
        if self.taps.tap(self.touch.now(), x, y) and dbl is not None and dbl.on_double is not None:
            dbl.on_double()  # the second tap of a double tap (GestureDetector.onDoubleTap)
        elif target is not None and target.enabled and target.on_tap is not None:
            target.on_tap()
        self._after_action()

    def do_double_tap(self, x: int, y: int) -> None:
        """Two taps ``DOUBLE_TAP_GAP_MS`` apart: a double tap where something listens for one."""
        with self.one_action():
            self.do_tap(x, y)
            self.touch.advance(DOUBLE_TAP_GAP_MS)
            self.do_tap(x, y)

    def do_drag(self, x1: int, y1: int, x2: int, y2: int) -> None:
        """Press, hold past the long-press timeout, move, release (``input draganddrop``)."""
        if self._screen_off(f"drag {x1},{y1}->{x2},{y2}"):
            return
        self.taps.forget()
        win = self._window_at(x1, y1) if 0 <= x1 < self.width and 0 <= y1 < self.height else None
        src = W.listener_at(win.root, x1, y1, "on_drag") if win is not None else None
        if src is not None and src.on_drag is not None:
            src.on_drag(x2, y2)
            self._after_action()
            return
        with self.one_action():  # the hold is a long press; the move that follows drags nothing
            self.do_long_press(x1, y1)
            self.note_ignored(f"drag {x1},{y1}->{x2},{y2}: nothing draggable there")

    def do_long_press(self, x: int, y: int) -> None:
        if self._screen_off(f"long press {x},{y}"):
            return
        target = self._hit(x, y) if 0 <= x < self.width and 0 <= y < self.height else None
        if target is not None and target.enabled:
            if target.on_long is not None:
                target.on_long()
            elif target.field_key is not None and target.on_tap is not None:
                target.on_tap()  # long-press on a text field focuses it
        self._after_action()

    def do_swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        if self._screen_off(f"swipe {x1},{y1}->{x2},{y2}"):
            return
        if abs(x2 - x1) <= TAP_SLOP and abs(y2 - y1) <= TAP_SLOP:
            if duration_ms >= 500:
                self.do_long_press(x1, y1)
            else:
                self.do_tap(x1, y1)
            return
        if self.keyguard.swipe(x1, y1, x2, y2, SWIPE_MIN):
            self._after_action()
            return
        if self._touch_outside_menu(x1, y1):
            return
        dy = y1 - y2
        if -dy >= SWIPE_MIN and y1 < self._status_bar_height() and not self.shade.open:
            self.shade.pull_down()  # a swipe down from the status bar pulls the shade down
        elif abs(dy) >= SWIPE_MIN and abs(dy) >= abs(x2 - x1):
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
        if self._screen_off(f"type_text {text!r}"):
            return
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
        if self._screen_off(f"key {name}"):
            return
        self._press(name)
        self._after_action()

    def _press(self, name: str) -> None:
        """What key ``name`` does (the caller counts the action)."""
        if name == "escape":  # Generic.kcm: an ESCAPE no view handles falls back to BACK
            name = "back"
        if self.keyguard.press(name) or self.errors.press(name) or self.permissions.press(name):
            return
        app = self.apps[self.foreground]
        st = app.ui_state
        if name == "back":
            if self.shade.open:
                self.shade.close()
            elif self.popup_visible:
                self.popup_visible = False
            elif self.keyboard_visible():
                st.focus = None
            elif not app.back() and self.foreground != LAUNCHER:
                self.foreground = LAUNCHER
        elif name in ("home", "recents"):  # recents: the sim has no overview screen, it goes home
            self.shade.close()
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

    def do_clear(self) -> None:
        """Empty the focused field (select all + delete, uiautomator2's clear): one action."""
        st = self.apps[self.foreground].ui_state
        if st.focus is not None and not self.popup_visible:
            st.fields[st.focus] = ""
            st.replace_next = False
        else:
            self.note_ignored("clear text: no focused text field")
        self._after_action()

    @contextmanager
    def one_action(self) -> Iterator[None]:
        """Inputs inside count as one action (one ``input keyevent A B C`` command): the pop-up
        schedule and the clock see a single action at the end."""
        self._batch += 1
        try:
            yield
        finally:
            self._batch -= 1
            if self._batch == 0 and self._batched:
                self._batched = False
                self._after_action()

    def do_launch(self, package: str, *, screen: str | None = None) -> None:
        self._switch_to(package, caller_uid=SHELL_UID)
        if screen is not None:
            app = self.apps[package]
            stack = getattr(app, "stack", None)
            if isinstance(stack, list):
                stack[:] = ["main", screen]
        self._after_action()

    # ==== power ===================================================================================
    def set_screen(self, on: bool) -> None:
        """The power key: off makes screenshots black and drops touches and keys (not an action)."""
        if on != self.screen_on:
            self.screen_on = on
            if not on:
                self.keyguard.lock()  # a phone with a lock screen locks when its screen goes off
            self.invalidate()

    def _screen_off(self, what: str) -> bool:
        if self.screen_on:
            return False
        self.note_ignored(f"{what}: the screen is off")
        return True

    def reboot(self) -> None:
        """Power-cycle: settings, app data and files survive; every app's screen, fields, focus and
        scroll are reset (like a force-stop), the keyboard and pop-up are gone, and the phone comes
        back on the launcher with the screen on."""
        for app in self.apps.values():
            app.reset_ui()
        self.foreground = LAUNCHER
        self.activities = ActivityState(top={LAUNCHER: launch_activity(LAUNCHER)})
        self.popup_visible = False
        self.shade.close()
        self.kb = KeyboardState()
        self.screen_on = True
        self.boots += 1
        self._boot_processes()
        self.errors.current = None
        self.keyguard.lock()
        self.invalidate()

    def force_stop(self, package: str) -> None:
        app = self.apps.get(package)
        if app is None or package == LAUNCHER:
            return
        app.reset_ui()
        self.activities.stopped(package)
        self.am.force_stop(package)
        if self.errors.current is not None and self.errors.current.package == package:
            self.errors.current = None
        if self.foreground == package:
            self.foreground = LAUNCHER
            self.popup_visible = False
        self.invalidate()

    def _launch_from_app(self, package: str) -> None:
        self._switch_to(package)

    def _switch_to(self, package: str, caller_uid: int | None = None) -> None:
        """Bring ``package`` to the front (its process starts if it is not running); the log says
        who asked: the shell (``am start``, ``monkey``) or the app in front (the launcher's icon)."""
        cur = self.apps[self.foreground]
        cur.ui_state.focus = None
        if caller_uid is None:
            caller_uid = self.am.table.app_uid(self.foreground)
        self.foreground = package if package in self.apps else LAUNCHER
        if self.am.pid(self.foreground) is None:  # a cold start shows the launch activity
            self.activities.started(self.foreground)
        self.am.launched(self.foreground, caller_uid)
        self.permissions.on_front(self.foreground)
        self.invalidate()

    def grant(self, package: str, permission: str) -> None:
        """``pm grant``: raises ``permissions.PermissionError_`` (its message is the Java exception)."""
        self.permissions.grant(package, permission)

    def revoke(self, package: str, permission: str) -> None:
        self.permissions.revoke(package, permission)

    @property
    def locked(self) -> bool:
        """The lock screen is showing (``dumpsys window``'s ``mShowingLockscreen``)."""
        return self.keyguard.locked

    def switch_to(self, package: str) -> None:
        """Bring ``package`` to the front as the framework does (an error dialog's "App info")."""
        self._switch_to(package, caller_uid=1000)

    def widget_at(self, x: int, y: int) -> Widget | None:
        """The widget a tap at (x, y) reaches (a key, a system-bar button, an app's widget), or None."""
        return self._hit(x, y)

    def _hit(self, x: int, y: int) -> Widget | None:
        win = self._window_at(x, y)
        return W.hit(win.root, x, y) if win is not None else None

    def _touch_outside_menu(self, x: int, y: int) -> bool:
        """A touch outside an open pop-up menu closes it and is used up (PopupWindow's outside
        touch); the system bars and the keyboard still take their own touches."""
        menu = self.active_window()
        if menu.dismiss is None or W.contains(menu.root.bounds, x, y):
            return False
        win = self._window_at(x, y)
        if win is not None and win.package in (SYSTEMUI, IME_PACKAGE):
            return False
        menu.dismiss()
        self._after_action()
        return True

    def _window_at(self, x: int, y: int) -> Window | None:
        for win in reversed(self.windows()):
            if W.contains(win.root.bounds, x, y):
                return win
            if win.modal:
                return None  # a dialog is modal: touches outside it are swallowed
        return None

    def _ime_key(self, action: str) -> None:
        """A tap on a key of the keyboard (the tap is the action)."""
        if action == "shift":
            self.kb.shift = not self.kb.shift
        elif action == "mode":
            self.kb.symbols = not self.kb.symbols
        elif action in ("delete", "enter"):
            self._press(action)
        else:
            self._insert(" " if action == "space" else action)
            self.kb.shift = False

    def _nav_key(self, key: str) -> None:
        """A tap on a navigation-bar button: Back, Home, Overview act like the keys."""
        self._press(key)

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
        if self._batch:
            self._batched = True
            self.invalidate()
            return
        self.actions += 1
        self.clock.actions = self.actions
        self.invalidate()
        if self.popups.after_action(self.foreground, visible=self.popup_visible):
            self.popup_visible = True
            self.apps[self.foreground].ui_state.focus = None
            self.invalidate()
        self._app_faults()

    def _app_faults(self) -> None:
        """After an action: the foreground app logs a little and may crash or stop responding."""
        pkg = self.foreground
        if pkg in (LAUNCHER, SYSTEMUI) or self.errors.current is not None:
            return
        self.am.chatter(pkg)
        kind = self.faults.app_fault()
        if kind is not None:
            self.errors.fault(kind, pkg)

    def note_ignored(self, what: str) -> None:
        self.ignored.append(what)
        del self.ignored[:-50]

    def invalidate(self) -> None:
        self._version += 1
        self._sync_display()

    def _enter(self) -> None:
        if self.closed:
            raise DeviceOffline("sim device is closed")
        self.touch.arrive()
        self.touch.advance(CALL_GAP_MS)  # one protocol call after another: an agent's steps
        self.faults.device_call()

    # ==== queries ==================================================================================
    def packages(self) -> list[str]:
        return list(self.apps)

    def has_package(self, package: str) -> bool:
        return package in self.apps

    def current_package(self) -> str:
        return self.foreground

    def activity_of(self, package: str) -> str:
        """The component ``PKG/.Activity`` that ``package`` shows (sim/activities.py)."""
        return self.activities.current(package)

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
            "shade": self.shade.state,
            "screen_on": self.screen_on, "boots": self.boots, "locked": self.keyguard.locked,
            "app_error": None if self.errors.current is None else [self.errors.current.kind,
                                                                   self.errors.current.package],
            "focus": app.ui_state.focus, "keyboard": self.keyboard_visible(),
            "ignored_inputs": list(self.ignored), "faults": list(self.faults.log),
            "settings": {ns: dict(kv) for ns, kv in self.settings.values.items()},
            "apps": {pkg: {"ui": a.snapshot(), "fields": dict(a.ui_state.fields),
                           "scroll": dict(a.ui_state.scroll)} for pkg, a in self.apps.items()},
            "files": sorted(self.fs.files),
        }
