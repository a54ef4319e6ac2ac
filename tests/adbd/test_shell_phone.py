"""The shell a phone has, as real clients see it over the wire: Debian's `adb shell` / `adb install`
and adbutils (app_clear, list_packages, app_info, app_current, shell2) against a served sim.

Each family: cmd package, pm, dumpsys package/activity/meminfo, am start -W and activity names,
input text/keycombination, shell builtins and file tools."""

from __future__ import annotations

import datetime
import io
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import adbutils
import pytest
from adbd_support import SimDevice, needs_adb

pytestmark = needs_adb

LAUNCHABLE = {"com.android.settings", "com.android.deskclock", "com.android.contacts", "com.artemis.notes",
              "com.artemis.shop"}


def _adbutils(sim: SimDevice) -> adbutils.AdbDevice:
    return adbutils.AdbClient(port=sim.adb.port).device(sim.serial)


def _run(sim: SimDevice, command: str) -> tuple[str, str, int]:
    """`adb shell COMMAND` with Debian's adb (shell v2: stdout, stderr and the exit status apart)."""
    res = sim.adb.run("shell", command, serial=sim.serial, check=False)
    return res.stdout.decode("utf-8", "replace"), res.stderr.decode("utf-8", "replace"), res.returncode


def _ids(sim: SimDevice) -> list[str]:
    out = sim.shell("uiautomator dump /sdcard/w.xml && cat /sdcard/w.xml")
    xml = out[out.index("<?xml"):]
    return [n.get("resource-id", "") for n in ET.fromstring(xml).iter("node")]


def _tap(sim: SimDevice, rid: str) -> None:
    """`input tap` at the centre of the node with resource id ``rid`` in a fresh dump."""
    out = sim.shell("uiautomator dump /sdcard/w.xml && cat /sdcard/w.xml")
    node = next(n for n in ET.fromstring(out[out.index("<?xml"):]).iter("node") if n.get("resource-id") == rid)
    left, top, right, bottom = map(int, re.findall(r"\d+", node.get("bounds", "")))
    sim.shell(f"input tap {(left + right) // 2} {(top + bottom) // 2}")


# -- cmd package -----------------------------------------------------------------------------
def test_query_activities_lists_launchable_apps_the_way_mobile_mcp_parses_them(sim_device: SimDevice) -> None:
    out, _, code = _run(sim_device, "cmd package query-activities -a android.intent.action.MAIN "
                                    "-c android.intent.category.LAUNCHER")
    assert code == 0 and out.startswith(f"{len(LAUNCHABLE)} activities found:\n")
    # mobile-mcp's listApps: trimmed lines starting with packageName=, de-duplicated
    names = {ln.strip()[len("packageName="):] for ln in out.splitlines() if ln.strip().startswith("packageName=")}
    assert names == LAUNCHABLE
    assert "name=com.android.contacts.activities.PeopleActivity" in out
    brief = sim_device.shell("cmd package query-activities --brief -a android.intent.action.MAIN "
                             "-c android.intent.category.LAUNCHER")
    assert "    com.android.deskclock/.DeskClock\n" in brief and "com.android.launcher3" not in brief
    home = sim_device.shell("cmd package query-activities --components -a android.intent.action.MAIN "
                            "-c android.intent.category.HOME")
    assert home == "com.android.launcher3/.uioverrides.QuickstepLauncher\n"
    resolved = sim_device.shell("cmd package resolve-activity --brief com.android.settings").splitlines()
    assert resolved[-1] == "com.android.settings/.Settings"


def test_cmd_with_an_unknown_service_or_subcommand_fails_as_a_phone(sim_device: SimDevice) -> None:
    assert _run(sim_device, "cmd nosuch list") == ("", "cmd: Can't find service: nosuch\n", 20)
    out, _, code = _run(sim_device, "cmd package frobnicate")
    assert (out, code) == ("Unknown command: frobnicate\n", 255)
    out, _, code = _run(sim_device, "pm frobnicate")
    assert (out, code) == ("Unknown command: frobnicate\n", 255) and "list packages" not in out
    out, err, code = _run(sim_device, "content frobnicate")
    assert "pm list packages" not in out + err and "[ERROR] Unsupported operation: frobnicate" in out + err
    displays = sim_device.shell("cmd display get-displays")
    assert displays.startswith("Display id 0:") and ", state ON," in displays and 'uniqueId "local:' in displays


# -- pm --------------------------------------------------------------------------------------
def test_list_packages_filters_like_a_phone_through_adbutils(sim_device: SimDevice) -> None:
    d = _adbutils(sim_device)
    assert set(d.list_packages(filter_list=["-3"])) == {"com.artemis.notes", "com.artemis.shop"}
    system = set(d.list_packages(filter_list=["-s"]))
    assert {"com.android.settings", "com.android.launcher3", "com.android.systemui", "android"} <= system
    assert "com.artemis.notes" not in system
    assert d.list_packages(filter_list=["-3", "shop"]) == ["com.artemis.shop"]
    paths = sim_device.shell("pm list packages -f -s settings")
    assert "package:/system_ext/priv-app/Settings/Settings.apk=com.android.settings\n" in paths
    third = sim_device.shell("pm list packages -3 -f -U")
    assert re.search(r"^package:/data/app/~~[\w=-]+/com\.artemis\.notes-[\w=-]+/base\.apk=com\.artemis\.notes "
                     r"uid:1\d{4}$", third, re.M), third
    assert _run(sim_device, "pm list packages -Z")[1:] == ("Error: Unknown option: -Z\n", 255)
    assert "feature:android.hardware.touchscreen\n" in sim_device.shell("pm list features")


def test_pm_clear_empties_the_app_data_and_kills_it(sim_device: SimDevice) -> None:
    sim_device.shell("am start -n com.artemis.notes/.MainActivity")
    assert "com.artemis.notes:id/note_item" in _ids(sim_device)
    out, _, code = _run(sim_device, "pm clear com.artemis.notes")
    assert (out, code) == ("Success\n", 0)
    assert sim_device.phone.current_package() == "com.android.launcher3"  # the app's process died
    sim_device.shell("am start -n com.artemis.notes/.MainActivity")
    assert "com.artemis.notes:id/note_item" not in _ids(sim_device)  # no notes: data is empty
    assert _run(sim_device, "pm clear com.nosuch.app") == ("", "Failed\n", 1)


def test_adbutils_app_clear_logs_the_shop_out(sim_device: SimDevice) -> None:
    sim_device.shell("am start -n com.artemis.shop/.MainActivity")
    for rid, text in (("username", "demo"), ("password", "artemis123")):
        _tap(sim_device, f"com.artemis.shop:id/{rid}")
        sim_device.shell(f"input text {text}")
    _tap(sim_device, "com.artemis.shop:id/login")
    assert "com.artemis.shop:id/product_list" in _ids(sim_device)
    _adbutils(sim_device).app_clear("com.artemis.shop")
    sim_device.shell("am start -n com.artemis.shop/.MainActivity")
    assert "com.artemis.shop:id/login" in _ids(sim_device)  # logged out: the data is gone


def _apk(package: str | None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        if package is not None:
            z.writestr("AndroidManifest.xml", f'<manifest package="{package}"/>')
        z.writestr("classes.dex", b"dex\n035\0")
    return buf.getvalue()


def test_adb_install_and_uninstall_a_pushed_apk(sim_device: SimDevice, tmp_path: Path) -> None:
    apk = tmp_path / "hello.apk"
    apk.write_bytes(_apk("com.example.hello"))
    res = sim_device.adb.run("install", "-r", str(apk), serial=sim_device.serial)
    assert b"Success" in res.stdout
    assert "package:com.example.hello\n" in sim_device.shell("pm list packages -3")
    assert "com.example.hello/.MainActivity" in sim_device.shell(
        "cmd package query-activities --components -a android.intent.action.MAIN -c android.intent.category.LAUNCHER")
    info = _adbutils(sim_device).app_info("com.example.hello")
    assert info is not None and info.version_name == "1.4.2" and info.first_install_time is not None
    assert _run(sim_device, "pm uninstall com.example.hello")[0] == "Success\n"
    assert "com.example.hello" not in sim_device.shell("pm list packages")
    assert _run(sim_device, "pm uninstall com.example.hello") == ("Failure [DELETE_FAILED_INTERNAL_ERROR]\n", "", 1)
    # a system app cannot leave the system image; for user 0 it can
    assert _run(sim_device, "pm uninstall com.android.deskclock")[0] == "Failure [DELETE_FAILED_INTERNAL_ERROR]\n"
    assert _run(sim_device, "pm uninstall --user 0 com.android.deskclock")[0] == "Success\n"


def test_pm_install_refuses_what_is_not_an_apk(sim_device: SimDevice, tmp_path: Path) -> None:
    sim_device.phone.write_file("/data/local/tmp/bad.apk", b"this is not a zip")
    out, _, code = _run(sim_device, "pm install /data/local/tmp/bad.apk")
    assert code == 1 and out.startswith("Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse /data/app/vmdl")
    sim_device.phone.write_file("/data/local/tmp/x.apk", _apk(None))
    out, _, code = _run(sim_device, "pm install /data/local/tmp/x.apk")
    assert code == 1 and out.startswith("Failure [INSTALL_PARSE_FAILED_BAD_MANIFEST")
    out, err, code = _run(sim_device, "pm install /sdcard/missing.apk")
    assert code == 1 and "Error: Unable to open file: /sdcard/missing.apk" in err
    assert "com.example" not in sim_device.shell("pm list packages")


def test_pm_grant_checks_the_permission_like_a_phone(sim_device: SimDevice) -> None:
    shop = "com.artemis.shop"
    assert "android.permission.POST_NOTIFICATIONS: granted=false" in sim_device.shell(f"dumpsys package {shop}")
    assert _run(sim_device, f"pm grant {shop} android.permission.POST_NOTIFICATIONS") == ("", "", 0)
    assert "android.permission.POST_NOTIFICATIONS: granted=true" in sim_device.shell(f"dumpsys package {shop}")
    _, err, code = _run(sim_device, f"pm grant {shop} android.permission.CAMERA")
    assert code == 255 and f"Package {shop} has not requested permission android.permission.CAMERA" in err
    _, err, code = _run(sim_device, f"pm grant {shop} android.permission.INTERNET")
    assert code == 255 and "is not a changeable permission type" in err


# -- dumpsys -----------------------------------------------------------------------------------
def test_app_info_reads_dumpsys_package(sim_device: SimDevice) -> None:
    d = _adbutils(sim_device)
    notes = d.app_info("com.artemis.notes")
    assert notes is not None
    assert (notes.version_name, notes.version_code) == ("1.4.2", 142)
    assert notes.first_install_time == datetime.datetime(2024, 3, 5, 12, 0, 0)
    assert notes.path.startswith("/data/app/~~") and notes.path.endswith("/base.apk")
    settings = d.app_info("com.android.settings")
    assert settings is not None and "SYSTEM" in settings.flags and settings.version_code == 34
    assert d.app_info("com.nosuch.app") is None
    assert _run(sim_device, "dumpsys nosuchservice") == ("", "Can't find service: nosuchservice\n", 0)


def test_meminfo_is_what_uiautomator2_perf_reads(sim_device: SimDevice) -> None:
    assert sim_device.shell("dumpsys meminfo com.android.settings") == "No process found for: com.android.settings\n"
    sim_device.shell("am start -n com.android.settings/.Settings")
    out = sim_device.shell("dumpsys meminfo com.android.settings")
    assert "** MEMINFO in pid " in out and "[com.android.settings] **" in out
    m = re.search(r"TOTAL[:\s]+(\d+)", out)  # uiautomator2.ext.perf._MEM_PATTERN
    assert m and int(m.group(1)) > 1000
    assert re.search(r"TOTAL PSS:\s+" + m.group(1), out)


# -- activities --------------------------------------------------------------------------------
def test_real_activity_names_in_dumpsys_and_adbutils_app_current(sim_device: SimDevice) -> None:
    d = _adbutils(sim_device)
    for comp in ("com.android.settings/.Settings", "com.android.deskclock/.DeskClock",
                 "com.android.contacts/.activities.PeopleActivity", "com.artemis.notes/.MainActivity"):
        pkg, act = comp.split("/")
        sim_device.shell(f"am start -n {comp}")
        cur = d.app_current()
        assert cur.package == pkg and cur.activity in (act, pkg + act)
        acts = sim_device.shell("dumpsys activity activities")
        assert re.search(rf"topResumedActivity=ActivityRecord\{{\w+ u0 {re.escape(comp)} t\d+\}}", acts), acts
        assert re.search(rf"mResumedActivity: ActivityRecord\{{\w+ u0 {re.escape(comp)} t\d+\}}", acts)
        assert "  ResumedActivity: ActivityRecord{" in acts and f" {comp} t" in acts
    top = sim_device.shell("dumpsys activity top")
    assert re.search(r"ACTIVITY com\.artemis\.notes/\.MainActivity \w+ pid=\d+", top)


def test_am_start_w_reports_cold_warm_hot_and_a_missing_activity(sim_device: SimDevice) -> None:
    def launch() -> dict[str, str]:
        out = sim_device.shell("am start -W -n com.android.deskclock/.DeskClock")
        return dict(ln.split(": ", 1) for ln in out.splitlines() if ": " in ln)

    cold = launch()
    assert cold["Status"] == "ok" and cold["LaunchState"] == "COLD"
    assert cold["Activity"] == "com.android.deskclock/.DeskClock"
    hot = launch()
    assert hot["LaunchState"] == "HOT"
    sim_device.shell("input keyevent KEYCODE_HOME")
    warm = launch()
    assert warm["LaunchState"] == "WARM"
    times = [int(x["TotalTime"]) for x in (cold, warm, hot)]
    assert times[0] > times[1] > times[2] > 0  # a cold start is the slowest; never one constant
    assert int(cold["WaitTime"]) >= times[0]
    sim_device.shell("am force-stop com.android.deskclock")
    assert launch()["LaunchState"] == "COLD"
    _, err, code = _run(sim_device, "am start -n com.android.deskclock/.Nope")
    assert code == 0
    assert err == "Error type 3\nError: Activity class {com.android.deskclock/com.android.deskclock.Nope} does not exist.\n"
    _, err, _ = _run(sim_device, "am start -n com.android.settings/.MainActivity")  # Settings has no such
    assert "does not exist." in err


# -- input -------------------------------------------------------------------------------------
def _focus_note_title(sim: SimDevice) -> None:
    sim.shell("am start -n com.artemis.notes/.MainActivity")
    _tap(sim, "com.artemis.notes:id/new_note")
    _tap(sim, "com.artemis.notes:id/title")


def _title(sim: SimDevice) -> str:
    out = sim.shell("uiautomator dump /sdcard/w.xml && cat /sdcard/w.xml")
    node = next(n for n in ET.fromstring(out[out.index("<?xml"):]).iter("node")
                if n.get("resource-id") == "com.artemis.notes:id/title")
    return node.get("text", "")


def test_input_text_types_one_ascii_argument_like_a_phone(sim_device: SimDevice) -> None:
    _focus_note_title(sim_device)
    d = _adbutils(sim_device)
    assert d.shell2(["input", "text", "hello", "world"]).returncode == 0
    assert _title(sim_device) == "hello"  # the second word is ignored, as InputShellCommand does
    d.shell2(["input", "text", "%sthere"])
    assert _title(sim_device) == "hello there"
    res = d.shell2(["input", "text", "héllo"])
    assert res.returncode == 255 and "java.lang.NullPointerException" in res.output
    assert _title(sim_device) == "hello there"  # nothing typed
    sim_device.shell("input keycombination KEYCODE_CTRL_LEFT KEYCODE_A")
    sim_device.shell("input text new")
    assert _title(sim_device) == "new"  # Ctrl+A selected the text, typing replaced it
    sim_device.shell("input keycombination KEYCODE_SHIFT_LEFT KEYCODE_X")
    assert _title(sim_device) == "newX"
    assert _run(sim_device, "input keycombination KEYCODE_META_LEFT KEYCODE_TAB")[2] == 0
    assert _run(sim_device, "input keycombination KEYCODE_A")[2] == 255
    assert _run(sim_device, "input touchscreen -d 0 tap 10 10")[2] == 0
    assert "Error: Unknown command: frob" in _run(sim_device, "input frob")[1]


# -- builtins and files --------------------------------------------------------------------------
@pytest.mark.parametrize("command, stdout, code", [
    ("export A=b; echo $A ${A}c \"$A\" '$A'", "b bc b $A\n", 0),
    ("exec echo hi; echo never", "hi\n", 0),
    ("echo hi > /sdcard/a; cp /sdcard/a /sdcard/b && mv /sdcard/b /sdcard/Download/ && cat /sdcard/Download/b",
     "hi\n", 0),
    ("[ -f /sdcard/nope ]", "", 1),
    ("test -d /sdcard && [ -e /dev/null ] && [ ! -f /dev/null ] && [ 2 -lt 10 ] && [ x != y ] && echo ok", "ok\n", 0),
    ("cat /dev/null; cat < /dev/null; echo gone > /dev/null; echo $?", "0\n", 0),
    ("which sh getprop", "/system/bin/sh\n/system/bin/getprop\n", 0),
    ("which nosuchtool", "", 1),
    ("echo x > /data/local/tmp/t; chmod 755 /data/local/tmp/t && [ -x /data/local/tmp/t ] && echo x", "x\n", 0),
])
def test_builtins_and_file_tools(sim_device: SimDevice, command: str, stdout: str, code: int) -> None:
    out, _, rc = _run(sim_device, command)
    assert (out, rc) == (stdout, code)


def test_missing_command_df_and_bad_test(sim_device: SimDevice) -> None:
    assert _run(sim_device, "nosuchtool -x") == ("", "/system/bin/sh: nosuchtool: inaccessible or not found\n", 127)
    df = sim_device.shell("df /sdcard").splitlines()
    assert df[0].split() == ["Filesystem", "1K-blocks", "Used", "Available", "Use%", "Mounted", "on"]
    assert df[1].split()[-1] == "/storage/emulated" and len(df) == 2
    assert _run(sim_device, "[ a = a")[1:] == ("/system/bin/sh: [: missing ]\n", 2)
    assert _run(sim_device, "test abc -gt 1")[1:] == ("/system/bin/sh: test: abc: bad number\n", 2)
    assert _run(sim_device, "cp /sdcard/nope /sdcard/x")[1:] == ("cp: /sdcard/nope: No such file or directory\n", 1)
