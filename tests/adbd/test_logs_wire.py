"""Logs and processes over the wire: Debian's ``adb logcat`` / ``adb shell pidof`` and uiautomator2's
app_wait / app_start(wait=True) / app_list_running / session against a served sim."""

from __future__ import annotations

import re
import time

import adbutils
import uiautomator2 as u2
from adbd_support import SimDevice, needs_adb

pytestmark = needs_adb
SETTINGS = "com.android.settings"


def test_adb_logcat_dump_and_crash_buffer(sim_device: SimDevice) -> None:
    adb, serial = sim_device.adb, sim_device.serial
    sim_device.phone.launch(SETTINGS)
    out = adb.text("logcat", "-d", serial=serial)
    lines = out.splitlines()
    assert lines[0] == "--------- beginning of main", lines[:3]
    assert re.search(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ I ActivityManager: Start proc \d+:"
                     rf"{SETTINGS}/u0a\d+ for top-activity", out, re.M)
    assert adb.text("logcat", "-d", "-b", "crash", serial=serial) == ""
    sim_device.phone.errors.crash(SETTINGS)
    crash = adb.text("logcat", "-d", "-b", "crash", serial=serial).splitlines()
    assert crash[0] == "--------- beginning of crash"
    assert crash[1].endswith(" E AndroidRuntime: FATAL EXCEPTION: main")
    assert re.search(rf"Process: {SETTINGS}, PID: \d+$", crash[2])
    epoch = adb.text("logcat", "-d", "-v", "epoch", "-t", "2", serial=serial).splitlines()
    assert len(epoch) >= 2 and re.match(r"^\d{10}\.\d{3} ", epoch[-1])
    adb.run("logcat", "-c", serial=serial)
    assert adb.text("logcat", "-d", serial=serial) == ""


def test_adb_shell_pidof_answers_as_a_phone_does(sim_device: SimDevice) -> None:
    adb, serial = sim_device.adb, sim_device.serial
    res = adb.run("shell", "pidof", SETTINGS, serial=serial, check=False)
    assert (res.returncode, res.stdout) == (1, b"")
    adb.run("shell", "am", "start", "-n", f"{SETTINGS}/.Settings", serial=serial)
    res = adb.run("shell", "pidof", SETTINGS, serial=serial)
    assert re.fullmatch(rb"\d{4,5}\n", res.stdout), res.stdout
    assert res.stdout.strip().decode() in adb.text("shell", "ps", "-A", serial=serial)


def test_uiautomator2_app_wait_app_start_and_running_list(sim_device: SimDevice) -> None:
    d = u2.connect(adbutils.AdbClient(port=sim_device.adb.port).device(sim_device.serial))
    t0 = time.monotonic()
    d.app_start(SETTINGS, wait=True)  # monkey, then app_wait: must not block
    assert time.monotonic() - t0 < 10
    pid = d.app_wait(SETTINGS, timeout=5)
    assert pid == int(sim_device.shell(f"pidof {SETTINGS}"))
    running = d.app_list_running()
    assert SETTINGS in running and "com.android.launcher3" in running
    assert "com.android.contacts" not in running
    d.app_stop(SETTINGS)
    assert SETTINGS not in d.app_list_running()
    assert d.app_wait(SETTINGS, timeout=1.5) == 0
    t0 = time.monotonic()
    s = d.session(SETTINGS)
    assert time.monotonic() - t0 < 10 and s.running()
    assert s.pid != pid  # a new process
