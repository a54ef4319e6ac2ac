"""Runtime permissions and Android 14's permission-controller dialog.

One app asks, as its real counterpart does: the Clock (``com.android.deskclock``) requests
``android.permission.POST_NOTIFICATIONS`` when it comes to the front and the permission is neither
granted nor refused for good (Android 13+).  The dialog is its own window of
``com.google.android.permissioncontroller`` (the ids keep AOSP's ``com.android.permissioncontroller``
prefix, as on a Pixel): the message "Allow Clock to send you notifications?"
(``…:id/permission_message``), **Allow** (``…:id/permission_allow_button``) and **Don't allow**
(``…:id/permission_deny_button``).  Two refusals are final (the app stops asking), as on Android
11+; Back dismisses the dialog without an answer.  ``pm grant PKG PERM`` / ``pm revoke PKG PERM``
(``SimPhone.grant`` / ``revoke``) set the state; ``granted(pkg)`` is what ``dumpsys package`` shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from artemis_cli.sim.layout import Ui, UiState
from artemis_cli.sim.widgets import Window

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

CONTROLLER = "com.google.android.permissioncontroller"
RID = "com.android.permissioncontroller:id/"
POST_NOTIFICATIONS = "android.permission.POST_NOTIFICATIONS"
#: the runtime permissions each app requests (asked for on its launch) and the dialog's wording
REQUESTED: dict[str, tuple[str, ...]] = {"com.android.deskclock": (POST_NOTIFICATIONS,)}
MESSAGES = {POST_NOTIFICATIONS: "Allow {app} to send you notifications?",
            "android.permission.READ_CONTACTS": "Allow {app} to access your contacts?",
            "android.permission.CAMERA": "Allow {app} to take pictures and record video?",
            "android.permission.ACCESS_FINE_LOCATION": "Allow {app} to access this device's location?"}


class PermissionError_(ValueError):
    """``pm grant`` refused: the message is the Java exception line."""


@dataclass
class Permissions:
    phone: SimPhone
    enabled: bool = True
    granted_: dict[str, set[str]] = field(default_factory=dict)
    denials: dict[tuple[str, str], int] = field(default_factory=dict)
    pending: tuple[str, str] | None = None

    def granted(self, pkg: str) -> dict[str, bool]:
        """Each requested permission of ``pkg`` and whether it is granted (``dumpsys package``)."""
        return {p: p in self.granted_.get(pkg, set()) for p in REQUESTED.get(pkg, ())}

    def _check(self, pkg: str, perm: str) -> None:
        if not self.phone.has_package(pkg):
            raise PermissionError_(f"java.lang.IllegalArgumentException: Unknown package: {pkg}")
        if perm not in MESSAGES:
            raise PermissionError_(f"java.lang.IllegalArgumentException: Unknown permission: {perm}")
        if perm not in REQUESTED.get(pkg, ()):
            raise PermissionError_(f"java.lang.SecurityException: Package {pkg} has not requested permission "
                                   f"{perm}")

    def grant(self, pkg: str, perm: str) -> None:
        self._check(pkg, perm)
        self.granted_.setdefault(pkg, set()).add(perm)
        if self.pending == (pkg, perm):
            self.pending = None
        self.phone.invalidate()

    def revoke(self, pkg: str, perm: str) -> None:
        self._check(pkg, perm)
        self.granted_.get(pkg, set()).discard(perm)
        self.denials.pop((pkg, perm), None)
        self.phone.invalidate()

    def on_front(self, pkg: str) -> None:
        """``pkg`` came to the front: it asks for the first permission it lacks (if it may)."""
        if not self.enabled or self.pending is not None:
            return
        for perm in REQUESTED.get(pkg, ()):
            if perm not in self.granted_.get(pkg, set()) and self.denials.get((pkg, perm), 0) < 2:
                self.pending = (pkg, perm)
                app = self.phone.apps.get(pkg)
                if app is not None:
                    app.ui_state.focus = None
                return

    def _answer(self, allow: bool) -> None:
        if self.pending is None:
            return
        pkg, perm = self.pending
        self.pending = None
        if allow:
            self.granted_.setdefault(pkg, set()).add(perm)
        else:
            self.denials[(pkg, perm)] = self.denials.get((pkg, perm), 0) + 1
        self.phone.invalidate()

    def allow(self) -> None:
        self._answer(True)

    def deny(self) -> None:
        self._answer(False)

    def visible(self) -> bool:
        return self.pending is not None and self.phone.foreground == self.pending[0]

    def press(self, key: str) -> bool:
        """A key while the dialog is up: Back dismisses it unanswered; Home leaves it pending."""
        if not self.visible():
            return False
        if key == "back":
            self.pending = None
            self.phone.invalidate()
            return True
        return key != "home" and key != "recents"

    def window(self) -> Window | None:
        if not self.visible() or self.pending is None:
            return None
        pkg, perm = self.pending
        ph = self.phone
        app = ph.apps.get(pkg)
        label = app.label if app is not None and app.label else pkg
        ui = Ui(CONTROLLER, ph.width, ph.app_height, ph.opts, UiState())
        r = ui.dialog_rect(620, y_center=0.5)
        pad = ui.px(60)
        msg = ui.text((r[0] + pad, r[1] + ui.px(150), r[2] - pad, r[1] + ui.px(300)),
                      MESSAGES[perm].format(app=label), size=48, rid=RID + "permission_message", align="center")
        top = r[1] + ui.px(340)
        allow = ui.button((r[0] + pad, top, r[2] - pad, top + ui.px(110)), "Allow", self.allow,
                          rid=RID + "permission_allow_button")
        deny = ui.button((r[0] + pad, top + ui.px(130), r[2] - pad, top + ui.px(240)), "Don\u2019t allow",
                         self.deny, rid=RID + "permission_deny_button")
        root = ui.dialog(r, "", [msg, allow, deny], [])
        return Window(CONTROLLER, root, modal=True)
