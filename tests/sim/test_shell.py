from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artemis_cli.errors import ArtemisError
from artemis_cli.sim import SimPhone
from artemis_cli.sim.shell import tokenize


def test_screencap_and_dump(phone: SimPhone) -> None:
    png = phone.shell_bytes("screencap -p")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png == phone.screenshot()
    r = phone.run("uiautomator dump")
    assert r.output == b"UI hierchary dumped to: /sdcard/window_dump.xml\n" and r.exit_code == 0
    assert phone.shell("cat /sdcard/window_dump.xml") == phone.dump_xml()  # one line, drawing order
    assert phone.shell("uiautomator dump /data/local/tmp/x.xml").endswith("dumped to: /data/local/tmp/x.xml\n")
    assert phone.shell("uiautomator dump /dev/tty").startswith("<?xml")
    phone.shell("screencap -p /sdcard/s.png")
    assert phone.read_file("/sdcard/s.png").startswith(b"\x89PNG")


def test_input_commands(phone: SimPhone) -> None:
    phone.shell("monkey -p com.android.contacts -c android.intent.category.LAUNCHER 1")
    assert phone.current_app() == "com.android.contacts"
    phone.shell("input keyevent KEYCODE_HOME")
    assert phone.current_app() == "com.android.launcher3"
    phone.shell("am start -n com.artemis.notes/.MainActivity")
    assert phone.current_app() == "com.artemis.notes"
    phone.shell("input keyevent 4")
    assert phone.current_app() == "com.android.launcher3"
    out = phone.shell("am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER com.artemis.shop")
    assert out.startswith("Starting: Intent {") and phone.current_app() == "com.artemis.shop"
    assert phone.run("input tap abc 3").exit_code == 1
    assert phone.run("input").exit_code == 1
    assert phone.run("input keyevent KEYCODE_BOGUS").exit_code == 1


def test_am_force_stop_and_unknown_package(phone: SimPhone) -> None:
    phone.shell("am start -n com.android.settings/.Settings")
    phone.shell("input tap 540 460")  # Network & internet row
    assert phone.snapshot_state()["apps"]["com.android.settings"]["ui"]["screen"] == "network"
    phone.shell("am force-stop com.android.settings")
    assert phone.current_app() == "com.android.launcher3"
    phone.shell("monkey -p com.android.settings 1")
    assert phone.snapshot_state()["apps"]["com.android.settings"]["ui"]["screen"] == "main"
    r = phone.run("am start -n com.nope/.Main")  # like Android: the error on stderr, yet exit status 0
    assert r.stdout == b"Starting: Intent { cmp=com.nope/.Main }\n" and r.exit_code == 0
    assert r.stderr == b"Error type 3\nError: Activity class {com.nope/com.nope.Main} does not exist.\n"
    r = phone.run("monkey -p com.nope -c android.intent.category.LAUNCHER 1")
    assert b"No activities found" in r.output and r.exit_code != 0


def test_dumpsys_wm_getprop_pm(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    out = phone.shell("dumpsys window")
    assert re.search(r"mCurrentFocus=Window\{[0-9a-f]+ u0 com\.artemis\.shop/com\.artemis\.shop\.MainActivity\}", out)
    assert "mFocusedApp=ActivityRecord{" in out
    assert phone.shell("dumpsys window | grep mCurrentFocus").count("\n") == 1
    assert phone.shell("wm size") == "Physical size: 1080x2400\n"
    assert phone.shell("getprop ro.build.version.sdk") == "34\n"
    assert phone.shell("getprop ro.build.version.release") == "14\n"
    assert phone.shell("getprop ro.product.model") == "Artemis Sim\n"
    assert phone.shell("getprop ro.nope") == "\n"
    allp = phone.shell("getprop")
    assert "[ro.serialno]: [sim]\n" in allp
    pkgs = phone.shell("pm list packages").splitlines()
    for p in ("com.android.launcher3", "com.android.settings", "com.android.deskclock", "com.android.contacts",
              "com.artemis.notes", "com.artemis.shop"):
        assert f"package:{p}" in pkgs


def test_settings_command(phone: SimPhone) -> None:
    assert phone.shell("settings get global nope") == "null\n"
    assert phone.shell("settings put global foo bar") == ""
    assert phone.shell("settings get global foo") == "bar\n"
    assert phone.run("settings get bogus x").exit_code != 0
    assert phone.run("settings").exit_code != 0


def test_files_and_chaining(phone: SimPhone) -> None:
    assert phone.shell("echo hello > /sdcard/a.txt && cat /sdcard/a.txt") == "hello\n"
    md5 = hashlib.md5(b"hello\n").hexdigest()
    assert phone.shell("toybox md5sum /sdcard/a.txt") == f"{md5}  /sdcard/a.txt\n"
    assert "a.txt" in phone.shell("ls /sdcard").splitlines()
    r = phone.run("rm /sdcard/a.txt; cat /sdcard/a.txt")
    assert r.output == b"cat: /sdcard/a.txt: No such file or directory\n" and r.exit_code == 1
    assert phone.run("rm -f /sdcard/none").exit_code == 0
    assert phone.run("rm /sdcard/none").exit_code == 1
    assert phone.shell("false && echo no; echo yes") == "yes\n"
    assert phone.shell("false || echo alt") == "alt\n"
    assert phone.shell("echo 'a; b' \"c && d\"") == "a; b c && d\n"
    assert phone.shell("rm -f /sdcard/window_dump.xml 2>/dev/null; echo ok") == "ok\n"
    assert phone.run("echo x > /system/x").exit_code == 1
    phone.write_file("/data/local/tmp/f.bin", b"\x00\x01")
    assert phone.read_file("/data/local/tmp/f.bin") == b"\x00\x01"


def test_content_query_formats(phone: SimPhone) -> None:
    out = phone.shell("content query --uri content://com.artemis.notes/notes")
    assert out.splitlines()[0] == "Row: 0 _id=1, title=Groceries, body=Milk, eggs, bread, coffee"
    assert phone.shell("content query --uri content://com.artemis.notes/notes --where \"title='Nope'\"") == \
        "No result found.\n"
    assert phone.shell("content query --uri content://com.android.contacts/contacts --projection display_name "
                       "--where \"display_name LIKE 'A%'\"") == "Row: 0 display_name=Alice Anderson\n"
    assert phone.run("content query --uri content://com.nope/x").exit_code == 1
    assert phone.run("content query --uri content://com.artemis.notes/notes --where \"zzz='1'\"").exit_code == 1
    assert "name=wifi_on, value=1" in phone.shell("content query --uri content://settings/global")


def test_unknown_command(phone: SimPhone) -> None:
    r = phone.run("frobnicate --now")
    assert r.output == b"/system/bin/sh: frobnicate: inaccessible or not found\n" and r.exit_code == 127
    assert phone.shell("frobnicate") == "/system/bin/sh: frobnicate: inaccessible or not found\n"


def test_tokenizer_quotes_and_operators() -> None:
    assert tokenize("input text 'a b'") == ["input", "text", "a b"]
    assert tokenize('echo "x\\"y"') == ["echo", 'x"y']
    assert [str(t) for t in tokenize("a;b&&c||d|e")] == ["a", ";", "b", "&&", "c", "||", "d", "|", "e"]
    with pytest.raises(ValueError):
        tokenize("echo 'open")


@settings(deadline=None)
@given(st.text(max_size=60))
def test_shell_never_raises_on_garbage(cmd: str) -> None:
    phone = SimPhone(popups=False)
    try:
        r = phone.run(cmd)
        assert isinstance(r.output, bytes) and isinstance(r.exit_code, int)
        phone.shell(cmd)
    except ArtemisError:
        pass
    phone.hierarchy()


@settings(deadline=None)
@given(st.lists(st.sampled_from(["input tap 540 1000", "input swipe 540 2000 540 800", "input text hi",
                                 "input keyevent 4", "input keyevent 66", "input keyevent 67", "input tap 900 300",
                                 "monkey -p com.artemis.shop 1", "monkey -p com.android.deskclock 1",
                                 "input tap 950 2250", "input tap 540 700", "am force-stop com.artemis.shop"]),
                max_size=25))
def test_random_input_sequences_keep_valid_screens(cmds: list[str]) -> None:
    import xml.etree.ElementTree as ET

    phone = SimPhone(seed=1)
    for c in cmds:
        phone.run(c)
    root = ET.fromstring(phone.hierarchy())
    assert len(root) >= 2
    assert phone.screenshot().startswith(b"\x89PNG")
