"""The lock screen (keyguard) of a phone started with ``locked=True`` (task ``sim: {locked: true}``,
``artemis sim serve --locked``).

System UI's keyguard window covers the apps: the big clock (``com.android.systemui:id/
keyguard_clock_container``, the status-bar time), "Swipe up to unlock"
(``com.android.systemui:id/keyguard_indication_text``).  No PIN is set: a swipe up (at least
``SWIPE_MIN`` px, mostly vertical) or ``input keyevent 82`` (MENU) unlocks.  While it shows,
touches reach nothing behind it, Back and Home do nothing and typing is ignored.  Turning the
screen off locks a phone that has a lock screen again (and a reboot does).  ``dumpsys window``
reports ``mShowingLockscreen=true mDreamingLockscreen=true`` and ``isKeyguardShowing=true``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.sim import widgets as W
from artemis_cli.sim.layout import Ui, UiState
from artemis_cli.sim.sysui import SYSTEMUI
from artemis_cli.sim.widgets import Widget, Window

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

RID = f"{SYSTEMUI}:id/"


class Keyguard:
    def __init__(self, phone: SimPhone, enabled: bool) -> None:
        self.phone = phone
        self.enabled = enabled  # the phone has a (swipe) lock screen
        self.locked = enabled
        self.unlocks = 0

    def lock(self) -> None:
        if self.enabled and not self.locked:
            self.locked = True
            app = self.phone.apps.get(self.phone.foreground)
            if app is not None:
                app.ui_state.focus = None
            self.phone.invalidate()

    def unlock(self) -> None:
        if self.locked:
            self.locked = False
            self.unlocks += 1
            self.phone.invalidate()

    def press(self, key: str) -> bool:
        """A key on the lock screen: MENU unlocks; every other key is used up (True)."""
        if not self.locked:
            return False
        if key == "menu":
            self.unlock()
        else:
            self.phone.note_ignored(f"key {key}: the phone is locked")
        return True

    def swipe(self, x1: int, y1: int, x2: int, y2: int, min_travel: int) -> bool:
        """A swipe on the lock screen (True: it was used up): a swipe up unlocks."""
        if not self.locked:
            return False
        if y1 - y2 >= min_travel and abs(y1 - y2) >= abs(x2 - x1):
            self.unlock()
        else:
            self.phone.note_ignored(f"swipe {x1},{y1}->{x2},{y2}: the phone is locked (swipe up to unlock)")
        return True

    def window(self) -> Window | None:
        if not self.locked:
            return None
        ph = self.phone
        ui = Ui(SYSTEMUI, ph.width, ph.app_height, ph.opts, UiState())
        w, h = ph.width, ph.app_height
        clock = ui.text((0, round(h * 0.18), w, round(h * 0.30)), ph.clock.hhmm(), size=180, align="center",
                        rid=RID + "keyguard_clock_container")
        hint = ui.text((0, round(h * 0.88), w, round(h * 0.93)), "Swipe up to unlock", size=40, align="center",
                       color="muted", rid=RID + "keyguard_indication_text")
        root = Widget(W.FRAME, (0, 0, w, h), rid=RID + "notification_panel", children=[clock, hint],
                      kind="window")
        return Window(SYSTEMUI, root, modal=True)
