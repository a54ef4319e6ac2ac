"""What the package manager knows about each package: system or third-party, its APK path, uid,
version, install time and permissions; and what ``pm install|uninstall|clear`` do to the phone
(WORLD.md §4). The shell commands that print it are in ``shell_packages.py`` / ``shell_dumpsys.py``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import time
import zipfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

#: The system packages and where their APK lives on an AOSP Android 14 image.
SYSTEM_APKS: dict[str, str] = {
    "android": "/system/framework/framework-res.apk",
    "com.android.launcher3": "/system_ext/priv-app/Launcher3QuickStep/Launcher3QuickStep.apk",
    "com.android.settings": "/system_ext/priv-app/Settings/Settings.apk",
    "com.android.deskclock": "/product/app/DeskClock/DeskClock.apk",
    "com.android.contacts": "/product/priv-app/Contacts/Contacts.apk",
    "com.android.systemui": "/system_ext/priv-app/SystemUI/SystemUI.apk",
    "com.android.phone": "/system/priv-app/TeleService/TeleService.apk",
    "com.android.providers.settings": "/system/priv-app/SettingsProvider/SettingsProvider.apk",
    "com.android.shell": "/system/priv-app/Shell/Shell.apk",
    "com.android.inputmethod.latin": "/system/app/LatinIME/LatinIME.apk",
}
#: Fixed uids of the system packages (android.uid.system, .phone, .shell …); other apps get one
#: from 10000 up, derived from the package name.
SYSTEM_UIDS: dict[str, int] = {"android": 1000, "com.android.settings": 1000, "com.android.providers.settings": 1000,
                               "com.android.phone": 1001, "com.android.shell": 2000}
#: (permission, is a runtime permission) each app requests.
PERMISSIONS: dict[str, tuple[tuple[str, bool], ...]] = {
    "com.android.contacts": (("android.permission.READ_CONTACTS", True), ("android.permission.WRITE_CONTACTS", True),
                             ("android.permission.CALL_PHONE", True), ("android.permission.INTERNET", False)),
    "com.android.deskclock": (("android.permission.POST_NOTIFICATIONS", True),
                              ("android.permission.SCHEDULE_EXACT_ALARM", False),
                              ("android.permission.WAKE_LOCK", False), ("android.permission.VIBRATE", False)),
    "com.android.settings": (("android.permission.WRITE_SETTINGS", False),
                             ("android.permission.WRITE_SECURE_SETTINGS", False)),
    "com.artemis.shop": (("android.permission.INTERNET", False), ("android.permission.POST_NOTIFICATIONS", True),
                         ("android.permission.ACCESS_FINE_LOCATION", True)),
    "com.artemis.notes": (("android.permission.POST_NOTIFICATIONS", True),),
}
#: System packages that are not apps on the sim's screen (no App object) but are installed.
CORE_PACKAGES = ("android", "com.android.systemui", "com.android.phone", "com.android.providers.settings",
                 "com.android.shell", "com.android.inputmethod.latin")
SYSTEM_VERSION = ("14", 34)
APP_VERSION = ("1.4.2", 142)
FIRST_BOOT = "2024-03-05 12:00:00"  # when the image was flashed: the system apps' install time
PACKAGE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+")


def is_system(package: str) -> bool:
    return package in SYSTEM_APKS


def _b64(package: str, salt: str) -> str:
    digest = hashlib.sha256(f"{salt}|{package}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode()


def apk_path(package: str) -> str:
    """``/system…/X.apk`` or ``/data/app/~~HASH==/PKG-HASH==/base.apk`` (Android 11+'s layout)."""
    if package in SYSTEM_APKS:
        return SYSTEM_APKS[package]
    return f"/data/app/~~{_b64(package, 'dir')}/{package}-{_b64(package, 'pkg')}/base.apk"


def uid_of(package: str) -> int:
    if package in SYSTEM_UIDS:
        return SYSTEM_UIDS[package]
    return 10000 + int(hashlib.md5(package.encode()).hexdigest()[:6], 16) % 900 + 100


def version_of(package: str) -> tuple[str, int]:
    return SYSTEM_VERSION if is_system(package) else APP_VERSION


def permissions_of(package: str) -> tuple[tuple[str, bool], ...]:
    return PERMISSIONS.get(package, ())


@dataclass
class PackageState:
    """The package manager's per-phone state: when third-party packages were installed (the
    world's own apps came with the image), runtime permissions granted, packages disabled or
    removed for user 0."""

    installed_at: dict[str, float] = field(default_factory=dict)
    granted: dict[str, set[str]] = field(default_factory=dict)
    disabled: set[str] = field(default_factory=set)

    def install_time(self, package: str) -> str:
        when = self.installed_at.get(package)
        if when is None:
            return FIRST_BOOT
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(when))

    def is_granted(self, package: str, permission: str) -> bool:
        runtime = dict(permissions_of(package)).get(permission)
        if runtime is None:
            return False
        return not runtime or permission in self.granted.get(package, set())


class InstallError(Exception):
    """``pm install`` failed: the text after ``Failure [``."""


def package_of_apk(data: bytes, path: str) -> str:
    """The package an APK file installs: the ``package="…"`` of its AndroidManifest.xml (a sim
    APK may carry it as text), else the file's name when that is a package name
    (``com.example.app.apk``).  Raises InstallError like a phone's parser."""
    tmp = f"/data/app/vmdl{int(hashlib.md5(data).hexdigest()[:8], 16) % 10**9}.tmp/base.apk"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            names = set(z.namelist())
            manifest = z.read("AndroidManifest.xml") if "AndroidManifest.xml" in names else None
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise InstallError(f"INSTALL_PARSE_FAILED_NOT_APK: Failed to parse {tmp}: Failed to load asset path "
                           f"{tmp}") from e
    if manifest is None:
        raise InstallError(f"INSTALL_PARSE_FAILED_BAD_MANIFEST: Failed to parse {tmp}: AndroidManifest.xml "
                           "not found")
    m = re.search(rb'package="([^"]+)"', manifest)
    if m and PACKAGE_NAME.fullmatch(m.group(1).decode("ascii", "replace")):
        return m.group(1).decode("ascii")
    stem = path.rsplit("/", 1)[-1].removesuffix(".apk")
    if PACKAGE_NAME.fullmatch(stem):
        return stem
    raise InstallError(f"INSTALL_FAILED_INVALID_APK: Failed to parse {tmp}: no package name in the manifest")


def install(phone: SimPhone, package: str) -> None:
    """Install (or update) ``package`` as a stub app; an update keeps the app's data."""
    from artemis_cli.sim.worlds.stub import StubApp

    if package not in phone.apps:
        ctx = phone.apps[next(iter(phone.apps))].ctx
        phone.apps[package] = StubApp(ctx, package)
        phone.pm_state.installed_at[package] = phone.clock.epoch_s()
    phone.pm_state.disabled.discard(package)
    phone.invalidate()


def uninstall(phone: SimPhone, package: str) -> None:
    """Remove ``package``: its process dies, its screen and data are gone."""
    phone.force_stop(package)
    phone.apps.pop(package, None)
    phone.pm_state.installed_at.pop(package, None)
    phone.pm_state.granted.pop(package, None)
    phone.invalidate()


def clear(phone: SimPhone, package: str) -> None:
    """``pm clear``: the app's process dies and its data is as on first launch after install.
    Each app's data is what the app itself stores: Notes has no notes, the Shop nobody logged in,
    an empty cart and no orders; the Clock gets its default alarms back (DeskClock creates them
    when its database is created).  Contacts live in the contacts provider and settings in the
    settings provider, so clearing Contacts or Settings only resets their screens, as on a phone.
    Runtime permissions are revoked."""
    from artemis_cli.sim.worlds.notes import NotesApp
    from artemis_cli.sim.worlds.stub import StubApp

    app = phone.apps[package]
    phone.force_stop(package)
    if package not in ("com.android.contacts", "com.android.settings"):
        fresh = StubApp(app.ctx, package) if isinstance(app, StubApp) else type(app)(app.ctx)
        if isinstance(fresh, NotesApp):
            fresh.notes = []
            fresh.next_id = 1
        phone.apps[package] = fresh
    phone.pm_state.granted.pop(package, None)
    phone.invalidate()
