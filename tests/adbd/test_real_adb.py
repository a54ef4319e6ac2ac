"""What Debian's real `adb` sees: connect, devices -l, exec-out screencap, uiautomator dump + pull,
input tap, push/pull round trip, shell exit status through adbutils, ls."""

from __future__ import annotations

import io
from pathlib import Path

from adbd_support import SimDevice, needs_adb
from PIL import Image

from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb


def test_connect_and_devices_list_a_device_with_product_and_model(sim_device: SimDevice) -> None:
    listing = sim_device.adb.text("devices", "-l")
    line = next(ln for ln in listing.splitlines() if ln.startswith(sim_device.serial))
    assert line.split()[1] == "device"
    assert "product:artemis_sim" in line and "model:Artemis_Sim" in line and "device:artemis_sim" in line


def test_exec_out_screencap_is_a_valid_png_of_the_current_screen(sim_device: SimDevice) -> None:
    png = sim_device.adb.run("exec-out", "screencap", "-p", serial=sim_device.serial).stdout
    img = Image.open(io.BytesIO(png))
    img.verify()
    assert img.size == (1080, 2400)
    assert png == sim_device.phone.render_png()


def test_uiautomator_dump_then_pull_gives_the_in_process_xml(sim_device: SimDevice, tmp_path: Path) -> None:
    out = sim_device.shell("uiautomator dump /sdcard/w.xml")
    assert "UI hierchary dumped to: /sdcard/w.xml" in out
    sim_device.adb.run("pull", "/sdcard/w.xml", str(tmp_path / "w.xml"), serial=sim_device.serial)
    fresh = SimPhone(popups=False)  # the same world and seed, in process
    assert (tmp_path / "w.xml").read_text(encoding="utf-8") == fresh.dump_xml()


def test_input_tap_changes_the_screen_like_a_tap(sim_device: SimDevice) -> None:
    before = sim_device.phone.render_png()
    sim_device.shell("input tap 135 476")  # Settings on the launcher
    assert sim_device.phone.current_package() == "com.android.settings"
    assert "com.android.settings/" in sim_device.shell("dumpsys window")
    expected = SimPhone(popups=False)
    expected.do_tap(135, 476)
    after = sim_device.adb.run("exec-out", "screencap", "-p", serial=sim_device.serial).stdout
    assert after != before and after == expected.render_png()


def test_push_and_pull_round_trip_a_file(sim_device: SimDevice, tmp_path: Path) -> None:
    src = tmp_path / "blob.bin"
    src.write_bytes(bytes(range(256)) * 1500 + "héllo".encode())  # > 64 KiB: several DATA chunks
    sim_device.adb.run("push", str(src), "/sdcard/Download/blob.bin", serial=sim_device.serial)
    assert sim_device.phone.read_file("/sdcard/Download/blob.bin") == src.read_bytes()
    back = tmp_path / "back.bin"
    sim_device.adb.run("pull", "/sdcard/Download/blob.bin", str(back), serial=sim_device.serial)
    assert back.read_bytes() == src.read_bytes()
    assert "blob.bin" in sim_device.shell("ls /sdcard/Download")


def test_pull_of_a_missing_file_and_push_to_a_read_only_place_fail_cleanly(sim_device: SimDevice, tmp_path: Path) -> None:
    res = sim_device.adb.run("pull", "/sdcard/nope.txt", str(tmp_path / "x"), serial=sim_device.serial, check=False)
    assert res.returncode != 0 and b"does not exist" in res.stdout + res.stderr
    f = tmp_path / "f.txt"
    f.write_text("x")
    res = sim_device.adb.run("push", str(f), "/system/f.txt", serial=sim_device.serial, check=False)
    assert res.returncode != 0 and b"Read-only file system" in res.stdout + res.stderr
    assert sim_device.shell("echo alive").strip() == "alive"


def test_adbutils_shell2_gets_the_exit_status_over_legacy_shell(sim_device: SimDevice) -> None:
    import adbutils

    dev = adbutils.AdbClient(port=sim_device.adb.port).device(sim_device.serial)
    assert dev.shell2("false").returncode == 1
    ok = dev.shell2(["getprop", "ro.build.version.sdk"])
    assert ok.returncode == 0 and ok.output.strip() == "34"
    assert dev.window_size() == (1080, 2400)
    assert dev.app_current().package == "com.android.launcher3"
