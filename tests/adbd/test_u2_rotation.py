"""Rotation and screen size over the wire: Debian's adb, adbutils and uiautomator2 against a
served sim (``settings``/``content insert``/``wm size``, u2 ``set_orientation``)."""

from __future__ import annotations

import io
import re

import adbutils
import pytest
import uiautomator2 as u2
from adbd_support import SimDevice, needs_adb
from PIL import Image

from artemis_cli.perception.hierarchy import parse_hierarchy

pytestmark = needs_adb

NOTES = "com.artemis.notes"


def _adb(sim: SimDevice) -> adbutils.AdbDevice:
    return adbutils.AdbClient(port=sim.adb.port).device(sim.serial)


def _png_size(sim: SimDevice) -> tuple[int, int]:
    png = sim.adb.run("exec-out", "screencap", "-p", serial=sim.serial).stdout
    return Image.open(io.BytesIO(png)).size


def _dump(sim: SimDevice) -> str:
    sim.shell("uiautomator dump /sdcard/window_dump.xml")
    return sim.shell("cat /sdcard/window_dump.xml")


def _new_note_centre(xml: str) -> tuple[int, int]:
    b = next(n for n in parse_hierarchy(xml).nodes if n.resource_id.endswith(":id/new_note")).bounds
    return (b.left + b.right) // 2, (b.top + b.bottom) // 2


def test_rotation_settings_read_as_on_a_phone(sim_device: SimDevice) -> None:
    assert sim_device.shell("settings get system user_rotation").strip() == "0"
    assert sim_device.shell("settings get system accelerometer_rotation").strip() == "0"
    d = _adb(sim_device)
    assert d.rotation() == 0
    assert d.window_size() == (1080, 2400)


def test_rotation_round_trip_through_settings_and_content_insert(sim_device: SimDevice) -> None:
    """portrait -> landscape (content insert, what rotation tools run) -> portrait (settings put):
    the screenshot, the dump's rotation and bounds, and a tap all follow the rotated frame."""
    sim_device.phone.do_launch(NOTES)
    assert _png_size(sim_device) == (1080, 2400)
    portrait = _dump(sim_device)
    assert '<hierarchy rotation="0">' in portrait
    sim_device.shell("content insert --uri content://settings/system --bind name:s:user_rotation --bind value:i:1")
    d = _adb(sim_device)
    assert d.rotation() == 1
    assert d.window_size() == (2400, 1080)  # adbutils swaps wm size's physical size when rotated
    assert "Physical size: 1080x2400" in sim_device.shell("wm size")  # wm size stays the physical size
    assert _png_size(sim_device) == (2400, 1080)
    landscape = _dump(sim_device)
    assert '<hierarchy rotation="1">' in landscape
    x, y = _new_note_centre(landscape)
    assert x > 1080  # the button sits at the right of the landscape frame
    sim_device.shell(f"input tap {x} {y}")
    assert sim_device.phone.apps[NOTES].snapshot()["screen"] == "edit"  # the tap hit "New note"
    sim_device.shell("input keyevent BACK")
    sim_device.shell("input keyevent BACK")
    sim_device.shell("settings put system user_rotation 0")
    assert d.rotation() == 0
    assert _png_size(sim_device) == (1080, 2400)
    assert '<hierarchy rotation="0">' in _dump(sim_device)


def test_u2_set_orientation_rotates_the_phone(sim_device: SimDevice) -> None:
    d = u2.connect(_adb(sim_device))
    sim_device.phone.do_launch(NOTES)
    d.set_orientation("l")
    assert d.info["displayRotation"] == 1
    assert (d.info["displayWidth"], d.info["displayHeight"]) == (2400, 1080)
    assert d.orientation == "left"
    assert d.screenshot().size == (2400, 1080)
    assert '<hierarchy rotation="1">' in d.dump_hierarchy()
    assert sim_device.shell("settings get system user_rotation").strip() == "1"
    assert _adb(sim_device).rotation() == 1
    assert re.search(r"SurfaceOrientation: 1", sim_device.shell("dumpsys input"))
    d.set_orientation("r")
    assert d.info["displayRotation"] == 3
    d.set_orientation("n")
    assert d.info["displayRotation"] == 0 and d.screenshot().size == (1080, 2400)
    d.set_orientation("l")
    d.freeze_rotation(False)  # auto-rotate on: the phone lies upright on the desk
    assert d.info["displayRotation"] == 0
    assert sim_device.shell("settings get system accelerometer_rotation").strip() == "1"
    d.freeze_rotation(True)
    assert sim_device.shell("settings get system accelerometer_rotation").strip() == "0"
    with pytest.raises(ValueError):
        d.set_orientation("sideways")  # the client refuses it before any RPC


def test_wm_size_override_is_the_screen_apps_screenshots_and_dumps_use(sim_device: SimDevice) -> None:
    sim_device.phone.do_launch(NOTES)
    assert sim_device.shell("wm size 720x1600") == ""
    assert sim_device.shell("wm size") == "Physical size: 1080x2400\nOverride size: 720x1600\n"
    assert _adb(sim_device).window_size() == (720, 1600)
    assert _png_size(sim_device) == (720, 1600)
    xml = _dump(sim_device)
    assert max(n.bounds.right for n in parse_hierarchy(xml).nodes) <= 720
    bad = sim_device.adb.run("shell", "wm size abc", serial=sim_device.serial, check=False)
    assert bad.returncode == 255 and b"Error: bad size abc" in bad.stderr
    assert sim_device.shell("wm size reset") == ""
    assert sim_device.shell("wm size") == "Physical size: 1080x2400\n"
    assert _png_size(sim_device) == (1080, 2400)
    assert sim_device.shell("wm density 320") == ""
    assert sim_device.shell("wm density") == "Physical density: 420\nOverride density: 320\n"
    bad = sim_device.adb.run("shell", "wm density big", serial=sim_device.serial, check=False)
    assert bad.returncode == 255 and b"NumberFormatException" in bad.stderr
    sim_device.shell("wm density reset")
    assert sim_device.shell("wm density") == "Physical density: 420\n"


def test_content_insert_rows_a_query_then_finds(sim_device: SimDevice) -> None:
    assert sim_device.shell("content insert --uri content://settings/global --bind name:s:artemis_flag "
                            "--bind value:s:on") == ""
    rows = sim_device.shell("content query --uri content://settings/global --where \"name='artemis_flag'\"")
    assert "name=artemis_flag, value=on" in rows
    assert sim_device.shell("settings get global artemis_flag").strip() == "on"
    bad = sim_device.adb.run("shell", "content insert --uri content://settings/system --bind nocolon",
                             serial=sim_device.serial, check=False)
    assert bad.returncode != 0 and b"Invalid binding" in bad.stderr
    bad = sim_device.adb.run("shell", "content insert --uri content://nosuch/thing --bind name:s:x",
                             serial=sim_device.serial, check=False)
    assert bad.returncode != 0 and b"Unknown URI" in bad.stderr
