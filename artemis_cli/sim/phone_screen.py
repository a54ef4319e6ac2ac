"""What the simulated phone shows: its windows in drawing order, which one a point reaches, the
hierarchy dumps (the shell's ``uiautomator dump``, uiautomator2's) and the screen's pixels."""

from __future__ import annotations

import hashlib

from PIL import Image

from artemis_cli.perception.screenshot import Screenshot, without_pixels
from artemis_cli.sim import widgets as W
from artemis_cli.sim.display import with_rotation
from artemis_cli.sim.hierarchy_xml import dump, dump_u2, window_order
from artemis_cli.sim.keyboard import keyboard_top, layout
from artemis_cli.sim.phone_state import PhoneState
from artemis_cli.sim.popup import popup_window
from artemis_cli.sim.render import encode_png, render
from artemis_cli.sim.sysui import IME_PACKAGE, SYSTEMUI, ime_window, nav_bar, status_bar
from artemis_cli.sim.widgets import Widget, Window


class PhoneScreen(PhoneState):
    """The phone's windows, dumps and pixels, drawn from its state (sim/phone_state.py)."""

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

    def _window_at(self, x: int, y: int) -> Window | None:
        for win in reversed(self.windows()):
            if W.contains(win.root.bounds, x, y):
                return win
            if win.modal:
                return None  # a dialog is modal: touches outside it are swallowed
        return None

    def _hit(self, x: int, y: int) -> Widget | None:
        win = self._window_at(x, y)
        return W.hit(win.root, x, y) if win is not None else None

    def widget_at(self, x: int, y: int) -> Widget | None:
        """The widget a tap at (x, y) reaches (a key, a system-bar button, an app's widget), or None."""
        return self._hit(x, y)

    # ==== dumps ==================================================================================
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

    # ==== pixels =================================================================================
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
