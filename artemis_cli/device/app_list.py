"""What is installed on a device and what the launcher can open, read through its shell.

``installed_packages`` is ``pm list packages``; ``launchable_packages`` asks the package manager
for the activities of the launcher intent (MAIN + LAUNCHER), as the launcher itself does, and
is None when the device cannot say (an old Android without ``cmd package``).
"""

from __future__ import annotations

import re

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceOffline, ShellError
from artemis_cli.perception.packages import PACKAGE_RE, parse_package_list

LAUNCHER_QUERY = ("cmd package query-activities --brief -a android.intent.action.MAIN "
                  "-c android.intent.category.LAUNCHER")
_COMPONENT = re.compile(r"^\s*(?P<pkg>[A-Za-z][\w.]*)/(?P<act>[\w.$]+)\s*$")


def installed_packages(device: Device) -> list[str]:
    return parse_package_list(device.shell("pm list packages"))


def launchable_packages(device: Device) -> list[str] | None:
    """Packages with a launcher activity, in the package manager's order; None when unknown."""
    try:
        text = device.shell(LAUNCHER_QUERY)
    except DeviceOffline:
        raise
    except ShellError:
        return None
    found: dict[str, None] = {}
    for line in text.splitlines():
        m = _COMPONENT.match(line)
        if m and PACKAGE_RE.fullmatch(m["pkg"]):
            found.setdefault(m["pkg"], None)
    return list(found) if found else None


__all__ = ["LAUNCHER_QUERY", "installed_packages", "launchable_packages"]
