"""uiautomator2's selector API (`d(text=…)`) against the sim: the JSON-RPC methods it calls
(exist, waitForExists, waitUntilGone, objInfo, count, getText, setText, clearTextField, click at
the object's centre, scrollTo, …) and what they do to the phone."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import adbutils
import pytest
import uiautomator2 as u2
from adbd_support import ServedCli, SimDevice, needs_adb

pytestmark = needs_adb
NOTES = "com.artemis.notes"


def test_d_text_new_note_click_against_artemis_sim_serve_writes_a_note(cli: ServedCli) -> None:
    """The whole flow in a separate Python process, checked through the device afterwards."""
    code = (
        "import uiautomator2 as u2, sys\n"
        f"d = u2.connect({cli.serial!r})\n"
        f"d.app_start({NOTES!r})\n"
        "assert d(text='New note').exists\n"
        "assert d(text='New note').wait(timeout=3)\n"
        "d(text='New note').click()\n"
        "assert d(text='New note', className='android.widget.TextView').wait(timeout=3)  # the editor's title\n"
        f"title = d(resourceId='{NOTES}:id/title')\n"
        "assert title.get_text() == 'Title'  # an empty field shows its hint, as on Android\n"
        "title.set_text('x')\n"
        "assert title.get_text() == 'x'\n"
        "d(description='Save note').click()\n"
        "assert d(text='x').wait(timeout=3) and not d(text='Save').exists\n"
        "print('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120,
                         env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(cli.adb.port)})
    assert res.returncode == 0 and res.stdout == b"ok\n", res.stderr.decode()
    rows = cli.sh(f"adb shell content query --uri content://{NOTES}/notes --where \"title='x'\"").stdout
    assert rows == b"Row: 0 _id=4, title=x, body=\n"


def _connect(sim: SimDevice) -> u2.Device:
    return u2.connect(adbutils.AdbClient(port=sim.adb.port).device(sim.serial))


def test_exists_count_instance_and_object_info(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    sim_device.phone.do_launch(NOTES)
    assert d(text="New note").exists and not d(text="new note").exists  # exact text
    assert d(textContains="Meeting").exists and d(textStartsWith="Gro").exists
    assert d(textMatches=r"I.e.s").exists and not d(textMatches="Ide").exists  # a whole-string regex
    assert d(resourceId=f"{NOTES}:id/note_item").count == 3
    assert d(resourceId=f"{NOTES}:id/note_item")[1].info["contentDescription"] == "Meeting notes"
    assert d(resourceId=f"{NOTES}:id/note_item").child(text="Ideas").exists
    assert not d(resourceId=f"{NOTES}:id/note_item", instance=0).child(text="Ideas").exists
    assert d(text="Ideas").sibling(resourceId="android:id/summary").get_text().startswith("Write a blog")
    info = d(text="New note").info
    assert info["bounds"] == {"left": 704, "top": 2034, "right": 1032, "bottom": 2202}  # above the nav bar
    assert (info["className"], info["resourceName"], info["clickable"]) == (
        "android.widget.Button", f"{NOTES}:id/new_note", True)
    assert d(className="android.widget.TextView", packageName="com.android.systemui", index=0).get_text() == "9:00"


def test_wait_polls_until_the_screen_changes_and_times_out_otherwise(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    start = time.monotonic()
    assert d(text="Meeting notes").wait(timeout=0.6) is False
    assert time.monotonic() - start >= 0.6  # it waited the whole timeout
    assert d(text="Shop").wait_gone(timeout=0.3) is False

    def later() -> None:
        time.sleep(0.4)
        with sim_device.adbd.device.lock:
            phone.do_launch(NOTES)  # another client changes the screen meanwhile

    threading.Thread(target=later).start()
    assert d(text="Meeting notes").wait(timeout=10) is True
    assert d(text="Shop").wait_gone(timeout=1) is True


def test_click_set_text_and_clear_act_like_the_phone(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    d(text="Notes").click()  # a real tap at the centre: the launcher opens the app
    assert phone.current_package() == NOTES
    d(text="New note").click()
    body = d(resourceId=f"{NOTES}:id/body")
    body.set_text("first")
    body.set_text("second\nline")  # replaces (no append) and a newline is text, not Enter
    fields = phone.apps[NOTES].ui_state.fields
    assert fields["body"] == "second\nline" and phone.apps[NOTES].ui_state.focus == "body"
    assert body.get_text() == "second\nline"
    body.clear_text()
    assert fields["body"] == "" and body.get_text() == "Note"
    d(text="New note", className="android.widget.TextView").set_text("zzz")  # not editable: ignored
    assert "zzz" not in fields.values()
    with pytest.raises(u2.UiObjectNotFoundError):
        d(text="No such thing").click(timeout=0.2)


def test_a_dialog_in_the_way_takes_the_click_like_on_a_phone(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    phone.do_launch(NOTES)
    d(text="Groceries").click()
    d(description="Delete note").click()  # opens the modal "Delete this note?"
    assert d(text="Delete this note?").exists
    d(text="Save").click()  # under the dialog's scrim: the modal dialog swallows the tap
    assert d(text="Delete this note?").exists and phone.snapshot_state()["apps"][NOTES]["ui"]["screen"] == "edit"


def test_errors_come_back_as_the_server_reports_them(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    missing = {"mask": 1, "childOrSibling": [], "childOrSiblingSelector": [], "text": "Nope"}
    with pytest.raises(u2.UiObjectNotFoundError) as e:
        d.jsonrpc.getText(missing)
    assert e.value.args[:2] == (-32001, "androidx.test.uiautomator.UiObjectNotFoundException")
    with pytest.raises(u2.exceptions.RPCUnknownError, match="PatternSyntaxException"):
        d(textMatches="(").exists.__bool__()
    with pytest.raises(u2.UiObjectNotFoundError):
        d.jsonrpc.pinchIn(missing, 50, 10)  # served now: on a missing object it is not found


def test_scroll_to_brings_a_row_into_view(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    sim_device.phone.do_launch("com.android.contacts")
    assert not d(text="Oscar Quinn").exists
    assert d(scrollable=True).scroll.to(text="Oscar Quinn") is True
    assert d(text="Oscar Quinn").exists
    assert sim_device.phone.apps["com.android.contacts"].ui_state.scroll  # it really scrolled
    assert d(scrollable=True).scroll.forward() is False  # already at the end
    d(scrollable=True).scroll.toBeginning()
    assert d(text="Alice Anderson").exists


def test_screen_on_off_through_uiautomator2(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    assert d.info["screenOn"] is True
    d.screen_off()
    assert d.info["screenOn"] is False and sim_device.phone.screen_on is False
    d.click(135, 476)  # the touchscreen is off
    assert sim_device.phone.current_package() == "com.android.launcher3"
    d.press("power")
    assert d.info["screenOn"] is True
