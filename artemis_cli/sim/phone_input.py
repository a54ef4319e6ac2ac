"""Touches and typing on the simulated phone: where a tap, a long press, a swipe or a drag lands
on the screen (sim/phone_screen.py) and what it does; typed text and keys."""

from __future__ import annotations

from artemis_cli.sim import widgets as W
from artemis_cli.sim.gestures import DOUBLE_TAP_GAP_MS, SWIPE_MIN, TAP_SLOP
from artemis_cli.sim.phone_screen import PhoneScreen
from artemis_cli.sim.processes import SHELL_UID
from artemis_cli.sim.sysui import IME_PACKAGE, SYSTEMUI


class PhoneInput(PhoneScreen):
    """The phone's input: each ``do_*`` is one action (sim/phone_state.py counts it)."""

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

    def _screen_off(self, what: str) -> bool:
        if self.screen_on:
            return False
        self.note_ignored(f"{what}: the screen is off")
        return True

    # ==== keys and text ==========================================================================
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

    def do_clear(self) -> None:
        """Empty the focused field (select all + delete, uiautomator2's clear): one action."""
        st = self.apps[self.foreground].ui_state
        if st.focus is not None and not self.popup_visible:
            st.fields[st.focus] = ""
            st.replace_next = False
        else:
            self.note_ignored("clear text: no focused text field")
        self._after_action()

    # ==== apps ===================================================================================
    def do_launch(self, package: str, *, screen: str | None = None) -> None:
        self._switch_to(package, caller_uid=SHELL_UID)
        if screen is not None:
            app = self.apps[package]
            stack = getattr(app, "stack", None)
            if isinstance(stack, list):
                stack[:] = ["main", screen]
        self._after_action()
