"""The simulated phone's state below its screen and its input (sim/phone.py builds on it): the
apps and which is in front, the keyboard, the pop-up and the shade, power and processes, what a
key does, and the count of actions the pop-ups, the clock and the app faults follow."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from artemis_cli.errors import UsageError
from artemis_cli.perception.bytecache import MB, ByteLRU
from artemis_cli.perception.logcat import LogWatch
from artemis_cli.perception.packages import read_package_file
from artemis_cli.sim.activities import ActivityState, launch_activity
from artemis_cli.sim.app_errors import AppErrors
from artemis_cli.sim.display import Display
from artemis_cli.sim.faults import FaultInjector, parse_faults
from artemis_cli.sim.gestures import TapTracker, TouchClock
from artemis_cli.sim.keyboard import KeyboardState
from artemis_cli.sim.keyguard import Keyguard
from artemis_cli.sim.logbuf import LogBuffers
from artemis_cli.sim.packages import CORE_PACKAGES as SYSTEM_PACKAGES
from artemis_cli.sim.packages import PackageState
from artemis_cli.sim.permissions import Permissions
from artemis_cli.sim.popup import PopupSchedule
from artemis_cli.sim.processes import ActivityManager
from artemis_cli.sim.shade import Shade
from artemis_cli.sim.shell import Shell
from artemis_cli.sim.system import SettingsStore, VirtualClock
from artemis_cli.sim.sysui import SYSTEMUI, nav_bar_height
from artemis_cli.sim.vfs import VirtualFS
from artemis_cli.sim.widgets import Window
from artemis_cli.sim.worlds import LAUNCHER, WORLDS
from artemis_cli.sim.worlds.base import App, AppContext, Row
from artemis_cli.sim.worlds.stub import StubApp

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

PROVIDERS = {"com.android.contacts": "com.android.contacts", "com.android.deskclock": "com.android.deskclock",
             "com.artemis.notes": "com.artemis.notes", "com.artemis.shop": "com.artemis.shop"}


class PhoneState:
    """The state of a :class:`~artemis_cli.sim.phone.SimPhone` and what changes it without a place
    on the screen (keys, power, apps)."""

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
        phone = cast("SimPhone", self)  # only ever a SimPhone's base: its parts talk to the whole phone
        self.errors = AppErrors(phone)  # a crash's or an ANR's dialog (sim/app_errors.py)
        self.permissions = Permissions(phone, enabled=permission_prompts, granted_=self.pm_state.granted)  # one grant store (pm's)
        self.keyguard = Keyguard(phone, locked)  # the lock screen (sim/keyguard.py)
        self.sh = Shell(phone)
        self._version = 0
        self._built: tuple[int, list[Window]] | None = None
        self._xml: tuple[int, str] | None = None
        self.u2_dumps = 0  # uiautomator2-style dumps served so far: numbers each dump's window order
        #: PNGs of screens drawn before, by what was drawn. Bound: 4 MB of PNG, ~200 sim screens
        #: of ~20 KB (plain bytes: no pictures kept).
        self._png: ByteLRU[str, bytes] = ByteLRU("sim.screen_pngs", 4 * MB)
        self._logs = LogWatch(lambda command: phone.run(command).output.decode("utf-8", "replace"))

    # ==== the phone's state ======================================================================
    def _boot_processes(self) -> None:
        """A fresh process table and log (sim/processes.py, sim/logbuf.py), seeded by boot."""
        from artemis_cli.sim.packages import uid_of  # one uid per package: the package manager's

        self.logs = LogBuffers(self.clock, self.seed if self.boots == 1 else self.seed * 1000 + self.boots)
        self.am = ActivityManager(f"{self.seed}|{self.boots}", self.logs, uid_of)

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

    def invalidate(self) -> None:
        self._version += 1
        self._sync_display()

    def note_ignored(self, what: str) -> None:
        self.ignored.append(what)
        del self.ignored[:-50]

    # ==== actions ================================================================================
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

    # ==== keys ===================================================================================
    def keyboard_visible(self) -> bool:
        return (self.apps[self.foreground].ui_state.focus is not None and not self.popup_visible
                and self.errors.current is None and not self.permissions.visible() and not self.keyguard.locked)

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

    # ==== power and apps =========================================================================
    def set_screen(self, on: bool) -> None:
        """The power key: off makes screenshots black and drops touches and keys (not an action)."""
        if on != self.screen_on:
            self.screen_on = on
            if not on:
                self.keyguard.lock()  # a phone with a lock screen locks when its screen goes off
            self.invalidate()

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

    def switch_to(self, package: str) -> None:
        """Bring ``package`` to the front as the framework does (an error dialog's "App info")."""
        self._switch_to(package, caller_uid=1000)

    def grant(self, package: str, permission: str) -> None:
        """``pm grant``: raises ``permissions.PermissionError_`` (its message is the Java exception)."""
        self.permissions.grant(package, permission)

    def revoke(self, package: str, permission: str) -> None:
        self.permissions.revoke(package, permission)

    @property
    def locked(self) -> bool:
        """The lock screen is showing (``dumpsys window``'s ``mShowingLockscreen``)."""
        return self.keyguard.locked

    # ==== queries ================================================================================
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
