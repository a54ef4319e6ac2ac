"""Activity identity: which activities each package declares, which one it launches with, and
which one each app is showing (WORLD.md §4).

Everything that prints an activity name (``am start``, ``dumpsys activity``, ``dumpsys window``,
``cmd package resolve-activity``, uiautomator2's ``app_current``) asks :func:`activity_of` or
:meth:`ActivityState.current`, so one name is printed everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAIN_ACTIVITY = ".MainActivity"  # the sim's own apps and the package stubs
#: The launcher activity of the system apps, as on an AOSP Android 14 phone.
LAUNCH_ACTIVITY: dict[str, str] = {
    "com.android.launcher3": ".uioverrides.QuickstepLauncher",
    "com.android.settings": ".Settings",
    "com.android.deskclock": ".DeskClock",
    "com.android.contacts": ".activities.PeopleActivity",
}
#: Further activities an app declares (started with ``am start -n PKG/ACT``); anything else is
#: "Error type 3 … does not exist." like an undeclared activity on a phone.
OTHER_ACTIVITIES: dict[str, tuple[str, ...]] = {
    "com.android.launcher3": (".Launcher",),
    "com.android.settings": (".SubSettings", ".Settings$WifiSettingsActivity",
                             ".Settings$DisplaySettingsActivity", ".Settings$MyDeviceInfoActivity"),
}


def launch_activity(package: str) -> str:
    """The short (``.X``) name of the activity ``package`` launches with."""
    return LAUNCH_ACTIVITY.get(package, MAIN_ACTIVITY)


def short_name(package: str, activity: str) -> str:
    """``com.pkg.X`` or ``.X`` as the short ``.X`` form when it is inside ``package``."""
    if activity.startswith(package + "."):
        return activity[len(package):]
    return activity


def full_class(package: str, activity: str) -> str:
    """``.X`` as ``com.pkg.X`` (a class name outside the package stays as it is)."""
    return package + activity if activity.startswith(".") else activity


def declares(package: str, activity: str) -> bool:
    """Whether ``package`` declares ``activity`` (short or full form)."""
    short = short_name(package, activity)
    return short == launch_activity(package) or short in OTHER_ACTIVITIES.get(package, ())


def activity_of(package: str, activity: str | None = None) -> str:
    """The component ``PKG/.Activity`` as Android prints it (short form when the class is in the
    package): ``activity`` or, without it, the package's launcher activity."""
    return f"{package}/{short_name(package, activity or launch_activity(package))}"


@dataclass
class ActivityState:
    """The activity each app shows (what was started in it). Whether an app runs is the process
    table's (sim/processes.py): ``am start -W`` reports COLD for an app with no process, WARM for
    one in the background and HOT for the one already in front."""

    top: dict[str, str] = field(default_factory=dict)

    def started(self, package: str, activity: str | None = None) -> None:
        """Record that ``package`` was started (with ``activity``)."""
        self.top[package] = short_name(package, activity or launch_activity(package))

    def stopped(self, package: str) -> None:
        self.top.pop(package, None)

    def current(self, package: str) -> str:
        """The component ``package`` shows: the activity last started in it, else its launcher one."""
        return activity_of(package, self.top.get(package))
