"""uiautomator2's hierarchy dump from `artemis sim serve`: one top-level node per window (the app,
the status bar, the navigation bar, the keyboard), listed in an order that changes from dump to
dump but is the same for the same seed and the same sequence of dumps; perception hit-tests it;
a tap on the navigation bar's Back button is Back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from adbd_support import AdbServer, needs_adb, serve_cli, stop_cli

from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import hit_test

pytestmark = needs_adb

# Runs in its own process against the served phone: launch Contacts, focus the search field (the
# keyboard comes up), then print one line per dump: its top-level windows, in file order.
_CLIENT = """
import sys, xml.etree.ElementTree as ET
import uiautomator2 as u2
d = u2.connect(sys.argv[1])
d.app_start("com.android.contacts")
d(resourceId="com.android.contacts:id/search_field").click()
for _ in range(int(sys.argv[2])):
    xml = d.dump_hierarchy()
    print(" ".join(f"{w.get('package')}|{w.get('resource-id')}" for w in ET.fromstring(xml.encode())))
open(sys.argv[3], "w", encoding="utf-8").write(xml)
"""


def _orders(adb: AdbServer, seed: int, dumps: int, out: str) -> list[str]:
    served = serve_cli(adb, "--no-popups", "--seed", str(seed))
    try:
        res = subprocess.run([sys.executable, "-c", _CLIENT, served.serial, str(dumps), out], capture_output=True,
                             timeout=120, env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb.port)})
        assert res.returncode == 0, res.stderr.decode()
        return res.stdout.decode().splitlines()
    finally:
        stop_cli(served)


@pytest.mark.slow
def test_served_u2_dump_lists_every_window_in_a_seeded_varying_order(adb_server: AdbServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a = _orders(adb_server, 11, 10, str(tmp_path / "a.xml"))
    windows = {
        "com.android.contacts|",
        "com.android.systemui|",  # the status bar
        "com.android.systemui|com.android.systemui:id/navigation_bar_frame",
        "com.google.android.inputmethod.latin|",
    }
    assert len(a) == 10 and all(sorted(line.split()) == sorted(windows) for line in a)
    assert len(set(a)) >= 3  # not the drawing order every time
    assert a == _orders(adb_server, 11, 10, str(tmp_path / "b.xml"))  # same seed, same dumps: same orders
    assert a != _orders(adb_server, 12, 10, str(tmp_path / "c.xml"))

    tree = parse_hierarchy((tmp_path / "a.xml").read_bytes(), screen_size=(1080, 2400))
    for (x, y), want in {(270, 2337): ("com.android.systemui:id/back", "Back"),
                         (100, 48): ("com.android.systemui:id/clock", ""),
                         (540, 518): ("com.android.contacts:id/contact_row", "Alice Anderson"),
                         (62, 1624): ("com.google.android.inputmethod.latin:id/key_pos_0_0", "q")}.items():
        t = hit_test(tree, x, y)
        assert (t.resource_id, t.content_desc) == want, (x, y)


def test_u2_click_on_the_navigation_bar_back_button_is_back(adb_server: AdbServer) -> None:
    served = serve_cli(adb_server, "--no-popups")
    code = ("import sys, uiautomator2 as u2\n"
            "d = u2.connect(sys.argv[1])\n"
            "d.app_start('com.android.settings')\n"
            "d(text='Display').click()\n"
            "assert d(text='Dark theme').wait(timeout=3)\n"
            "d(resourceId='com.android.systemui:id/back', description='Back').click()\n"
            "assert d(text='About phone').wait(timeout=3) and not d(text='Dark theme').exists\n"
            "d.click(270, 2337)  # Back again, by coordinates: leaves Settings\n"
            "assert d.app_current()['package'] == 'com.android.launcher3', d.app_current()\n"
            "print('ok')\n")
    try:
        res = subprocess.run([sys.executable, "-c", code, served.serial], capture_output=True, timeout=120,
                             env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb_server.port)})
        assert res.returncode == 0 and res.stdout.decode().strip() == "ok", res.stderr.decode()[-2000:]
    finally:
        stop_cli(served)
