"""uiautomator2 3.x against the sim adbd: jar push + server start, JSON-RPC methods, Unicode text."""

from __future__ import annotations

import os
import subprocess
import sys

import adbutils
import pytest
import uiautomator2 as u2
from adbd_support import SimDevice, needs_adb

from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.sim.adbd.device_shell import U2_JAR
from artemis_cli.sim.hierarchy_xml import dump
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb


def test_the_issue_one_liner_works_and_unicode_reaches_the_focused_field(sim_device: SimDevice) -> None:
    sim_device.phone.do_launch("com.android.contacts")
    sim_device.phone.do_tap(540, 344)  # focus "Search contacts"
    code = (f"import uiautomator2 as u2; d=u2.connect({sim_device.serial!r}); print(d.dump_hierarchy()[:80]); "
            "d.send_keys('héllo 你好')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                         env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(sim_device.adb.port)})
    assert res.returncode == 0, res.stderr.decode()
    assert res.stdout.decode().startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy")
    fields = sim_device.phone.apps["com.android.contacts"].ui_state.fields
    assert "héllo 你好" in fields.values()
    assert sim_device.phone.fs.exists(U2_JAR)  # the jar was pushed
    assert sim_device.adbd.device.u2.starts == 1


def same_screen(u2_xml: str, phone: SimPhone) -> bool:
    """uiautomator2's dump shows what the phone shows: the same nodes, its windows in any order."""
    def nodes(xml: str) -> list[tuple[str, ...]]:
        return sorted((n.class_name, n.package, n.resource_id, n.text, n.content_desc, str(n.bounds))
                      for n in parse_hierarchy(xml).nodes)
    return nodes(u2_xml) == nodes(dump(phone.windows()))  # every window (the shell's dump: the active one)


def _connect(sim: SimDevice) -> u2.Device:
    return u2.connect(adbutils.AdbClient(port=sim.adb.port).device(sim.serial))


def test_u2_methods_artemis_uses(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    assert d.window_size() == (1080, 2400)
    assert d.info["displayWidth"] == 1080 and d.info["sdkInt"] == 34
    assert same_screen(d.dump_hierarchy(), phone)
    img = d.screenshot()
    assert img.size == (1080, 2400)
    d.click(135, 476)
    assert d.app_current()["package"] == "com.android.settings"
    d.press("back")
    assert phone.current_package() == "com.android.launcher3"
    d.press(3)  # KEYCODE_HOME
    d.click(675, 476)
    d.swipe(540, 2000, 540, 1000, 0.2)
    assert phone.apps["com.android.contacts"].ui_state.scroll
    d.long_click(540, 344, 0.8)  # long press on the search field focuses it
    d.send_keys("abc")
    assert phone.apps["com.android.contacts"].ui_state.fields.get("search") == "abc" or "abc" in \
        phone.apps["com.android.contacts"].ui_state.fields.values()


def test_server_dies_with_its_shell_stream_and_is_restarted(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    d.stop_uiautomator()
    assert not sim_device.adbd.device.u2.running
    assert same_screen(d.dump_hierarchy(), sim_device.phone)  # the client restarts it
    assert sim_device.adbd.device.u2.starts == 2


def test_unknown_rpc_methods_are_json_rpc_errors(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    with pytest.raises(u2.exceptions.RPCUnknownError, match="Method not found"):
        d.jsonrpc.noSuchMethod()
