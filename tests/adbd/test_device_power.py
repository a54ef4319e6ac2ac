"""Power: `adb reboot` drops the device and brings it back with its persisted state; the screen
turns off and on with the power keys, as adbutils' `is_screen_on()` and uiautomator2 see it."""

from __future__ import annotations

import io
import os
import socket
import time
from collections.abc import Iterator

import adbutils
import pytest
from adbd_support import AdbServer, SimDevice, attach, free_port, needs_adb
from PIL import Image

from artemis_cli.errors import UsageError
from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.adbd.server import REBOOT_ENV, reboot_window
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb
KNOB = (0.4, 0.8)  # seconds the rebooting device refuses connections (default 2-5 s)


@pytest.fixture
def rebootable(adb_server: AdbServer) -> Iterator[SimAdbd]:
    adbd = SimAdbd(SimPhone(popups=False), port=free_port(), reboot_seconds=KNOB).start()
    attach(adb_server, adbd)
    try:
        yield adbd
    finally:
        adb_server.run("disconnect", adbd.serial, check=False)
        adbd.stop()


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def _wait_back(adb: AdbServer, serial: str, limit: float) -> float:
    """Re-attach like `artemis` does after a drop (disconnect + connect) until it is a device again."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        adb.run("disconnect", serial, check=False)
        if b"connected to" in adb.run("connect", serial, check=False, timeout=10).stdout:
            state = adb.run("get-state", serial=serial, check=False, timeout=10).stdout.strip()
            if state == b"device":
                return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"{serial} not back within {limit} s")


def test_adb_reboot_drops_the_device_then_it_returns_with_its_persisted_state(
        rebootable: SimAdbd, adb_server: AdbServer) -> None:
    serial, phone = rebootable.serial, rebootable.phone
    adb_server.run("shell", "settings put global device_name Rebooted; echo kept > /sdcard/keep.txt", serial=serial)
    adb_server.run("shell", "monkey -p com.artemis.notes 1; input tap 868 2118; input tap 540 379; input text draft",
                   serial=serial)
    assert phone.apps["com.artemis.notes"].ui_state.fields.get("title") == "draft"  # the editor is open
    before = time.monotonic()
    res = adb_server.run("reboot", serial=serial, timeout=10)
    assert res.returncode == 0 and time.monotonic() - before < 2  # returns once the device goes down
    assert _refused(rebootable.port)
    assert adb_server.run("get-state", serial=serial, check=False, timeout=10).stdout.strip() != b"device"
    back = _wait_back(adb_server, serial, limit=KNOB[1] + 5)
    assert KNOB[0] - 0.1 <= rebootable.last_reboot_seconds <= KNOB[1]
    assert back >= KNOB[0] - 0.1  # it really was gone for the drawn time
    out = adb_server.text("shell", "settings get global device_name; cat /sdcard/keep.txt; "
                          "dumpsys window | grep mCurrentFocus", serial=serial)
    assert out.splitlines()[:2] == ["Rebooted", "kept"]  # settings and files survive
    assert "com.android.launcher3/" in out.splitlines()[2]  # the foreground is the launcher again
    adb_server.run("shell", "monkey -p com.artemis.notes 1", serial=serial)
    notes = phone.snapshot_state()["apps"]["com.artemis.notes"]
    assert notes["ui"]["screen"] == "list" and notes["fields"].get("title", "") == ""  # the draft is gone
    assert (rebootable.reboots, phone.boots) == (1, 2)


def test_adb_shell_reboot_reboots_too_and_the_u2_server_dies_with_it(
        rebootable: SimAdbd, adb_server: AdbServer) -> None:
    rebootable.device.u2.running = True  # as if uiautomator2's server were up
    adb_server.run("shell", "reboot", serial=rebootable.serial, check=False, timeout=10)
    _wait_back(adb_server, rebootable.serial, limit=KNOB[1] + 5)
    assert rebootable.reboots == 1 and not rebootable.device.u2.running


def test_the_reboot_time_is_seeded_and_the_knob_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    def drawn(seed: int) -> float:
        adbd = SimAdbd(SimPhone(popups=False, seed=seed), port=0, reboot_seconds=(0.05, 0.3)).start()
        try:
            adbd.reboot()
            deadline = time.monotonic() + 5
            while adbd.reboots == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            return adbd.last_reboot_seconds
        finally:
            adbd.stop()

    assert drawn(7) == drawn(7) != drawn(8)
    monkeypatch.delenv(REBOOT_ENV, raising=False)
    assert reboot_window() == (2.0, 5.0)  # on by default, a few seconds like a phone's restart
    monkeypatch.setenv(REBOOT_ENV, "0.5-1")
    assert reboot_window() == (0.5, 1.0)
    monkeypatch.setenv(REBOOT_ENV, "0.25")
    assert reboot_window() == (0.25, 0.25)
    for bad in ("soon", "3-1"):
        monkeypatch.setenv(REBOOT_ENV, bad)
        with pytest.raises(UsageError):
            reboot_window()
    assert os.environ[REBOOT_ENV] == "3-1"


def test_screen_power_as_adbutils_and_dumpsys_see_it(sim_device: SimDevice) -> None:
    dev = adbutils.AdbClient(port=sim_device.adb.port).device(sim_device.serial)
    phone = sim_device.phone
    assert dev.is_screen_on() is True
    dev.keyevent("POWER")
    assert dev.is_screen_on() is False
    assert "Display Power: state=OFF" in sim_device.shell("dumpsys power")
    png = sim_device.adb.run("exec-out", "screencap", "-p", serial=sim_device.serial).stdout
    assert Image.open(io.BytesIO(png)).convert("L").getextrema() == (0, 0)  # a black frame
    sim_device.shell("input tap 135 476")  # Settings on the launcher: the touchscreen is off
    assert phone.current_package() == "com.android.launcher3"
    assert "<hierarchy" in sim_device.shell("uiautomator dump /dev/tty")  # the dump still works
    dev.keyevent("KEYCODE_WAKEUP")
    assert dev.is_screen_on() is True
    dev.keyevent("KEYCODE_WAKEUP")  # waking an awake phone keeps it on
    assert dev.is_screen_on() is True
    sim_device.shell("input keyevent 26; input keyevent 26")  # POWER twice: off, then on again
    assert dev.is_screen_on() is True
    sim_device.shell("input tap 135 476")
    assert phone.current_package() == "com.android.settings"
