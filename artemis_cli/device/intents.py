"""Intents every backend sends the same way, through its shell: open a URL (a VIEW intent) and
force-stop an app. One copy of each, for the sim, adb and uiautomator2 alike (each device's
``shell`` reaches its phone: the sim's shell answers ``am`` as Android 14 does).

``am start`` exits 0 even when nothing handles the intent: the failure is in what it prints
(``Error: Activity not started, unable to resolve Intent …``), read here into a ShellError the
step records.
"""

from __future__ import annotations

import re
import shlex

from artemis_cli.device.protocol import Device
from artemis_cli.errors import ShellError

#: a URL the model may open: a scheme, then no spaces or control characters
URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]+$")
MAX_URL_CHARS = 2000
PACKAGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
VIEW_ACTION = "android.intent.action.VIEW"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be opened (None: it can be sent)."""
    if len(url) > MAX_URL_CHARS:
        return f"the URL is {len(url)} characters; at most {MAX_URL_CHARS}"
    if not URL_RE.match(url):
        return "a URL starts with a scheme (https://…, tel:…, an app's own scheme) and has no spaces"
    return None


def open_url(device: Device, url: str) -> str:
    """Send a VIEW intent for ``url``; returns what ``am start`` printed, raises ShellError when
    no app handles it or the URL is malformed."""
    problem = url_problem(url)
    if problem:
        raise ShellError(f"cannot open {url[:80]!r}: {problem}")
    out = device.shell(f"am start -W -a {VIEW_ACTION} -d {shlex.quote(url)}")
    failure = _start_failure(out)
    if failure:
        raise ShellError(f"no app on the phone opens {url[:200]!r}: {failure}")
    return out


def stop_app(device: Device, package: str) -> bool:
    """Force-stop ``package``; True when its process is gone afterwards (``pidof`` prints no pid),
    False when it still runs (the step then says so instead of claiming it stopped)."""
    if not PACKAGE_RE.match(package):
        raise ShellError(f"not a package name: {package!r}")
    out = device.shell(f"am force-stop {package}")
    if out.strip():
        raise ShellError(f"force-stop {package} failed: {out.strip()[:200]}")
    return not device.shell(f"pidof {package}").strip()


def _start_failure(out: str) -> str | None:
    for line in out.splitlines():
        text = line.strip()
        if text.startswith("Error") or "Exception" in text:
            return text[:300]
    return None
