"""`artemis apps` end to end: `artemis sim serve --packages FILE` with a real phone's package list on
a private port, attached to a private adb server, then `artemis apps --device 127.0.0.1:P --json …`
through the real adb protocol: names resolve from package names alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from adbd_support import AdbServer, needs_adb, serve_cli, stop_cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "packages"
EXPECTED: dict[str, dict[str, str | None]] = json.loads((FIXTURES / "expected-names.json").read_text())["lists"]
NAMES = ["Messages", "Phone", "Play Store", "Files", "Gallery", "Camera", "Calculator", "Clock", "Settings", "Chrome"]

pytestmark = needs_adb


def artemis(adb: AdbServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb.port)}
    env.pop("ANDROID_SERIAL", None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.mark.parametrize("vendor_list", sorted(EXPECTED))
def test_apps_resolves_names_on_a_served_real_package_list(adb_server: AdbServer, vendor_list: str) -> None:
    served = serve_cli(adb_server, "--no-popups", "--packages", str(FIXTURES / vendor_list))
    try:
        res = artemis(adb_server, "apps", "--device", served.serial, "--json", *NAMES, "Pro Expense")
        assert res.returncode == 0, res.stderr
        doc: dict[str, Any] = json.loads(res.stdout)
    finally:
        stop_cli(served)
    assert doc["device"] == served.serial and doc["installed"] >= 170
    got = {r["query"]: r for r in doc["results"]}
    want = EXPECTED[vendor_list]
    for name in NAMES:
        assert got[name]["package"] == want[name], (name, got[name])
        assert got[name]["how"] == ("none" if want[name] is None else got[name]["how"])
    miss = got["Pro Expense"]
    assert (miss["package"], miss["how"]) == (None, "none")
    # the similar names (at most 8), else the launchable apps (at most 20), never the launcher
    assert 0 < len(miss["candidates"]) <= (20 if miss["listing"] else 8)
    assert "com.android.launcher3" not in miss["candidates"]


def test_apps_lists_launchable_apps_and_names_the_way_it_resolved(adb_server: AdbServer) -> None:
    served = serve_cli(adb_server, "--no-popups", "--packages", str(FIXTURES / "google-pixel-8-pro.txt"))
    try:
        listing = artemis(adb_server, "apps", "--device", served.serial, "--json")
        plain = artemis(adb_server, "apps", "--device", served.serial, "Messages", "com.android.settings",
                        "Markor")
    finally:
        stop_cli(served)
    assert listing.returncode == 0, listing.stderr
    doc = json.loads(listing.stdout)
    apps = [a["package"] for a in doc["apps"]]
    assert doc["launchable"] is True and "com.google.android.dialer" in apps and "com.android.launcher3" not in apps
    assert all(a["label"] is None for a in doc["apps"])  # plain adb gives no labels
    rows = [line.split("\t") for line in plain.stdout.splitlines()]  # not a terminal: tab-separated rows
    assert rows[0][:3] == ["Messages", "com.google.android.apps.messaging", "alias"]
    assert rows[1][:3] == ["com.android.settings", "com.android.settings", "package"]
    assert rows[2][:3] == ["Markor", "-", "not-installed"]


def test_apps_on_a_device_that_is_not_there_exits_3(adb_server: AdbServer) -> None:
    res = artemis(adb_server, "apps", "--device", "127.0.0.1:1", "Messages")
    assert res.returncode == 3 and "127.0.0.1:1" in res.stderr
