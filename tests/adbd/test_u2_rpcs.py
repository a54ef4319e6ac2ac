"""uiautomator2 RPCs beyond taps and dumps, over a served sim: the notification shade, the
selector flings, object drags, pinches, toasts, and the IME calls on a phone whose keyboard is
Gboard (no AdbKeyboard until u2 installs its app, as on a phone)."""

from __future__ import annotations

import adbutils
import pytest
import uiautomator2 as u2
from adbd_support import SimDevice, needs_adb

from artemis_cli.sim.adbd.device_shell import ADB_KEYBOARD
from artemis_cli.sim.system import GBOARD

pytestmark = needs_adb

NOTES = "com.artemis.notes"
CONTACTS = "com.android.contacts"
SHADE = "com.android.systemui:id/notification_shade"


def _connect(sim: SimDevice) -> u2.Device:
    return u2.connect(adbutils.AdbClient(port=sim.adb.port).device(sim.serial))


def test_open_notification_pulls_down_the_shade_and_back_or_a_swipe_up_closes_it(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    phone.do_launch(NOTES)
    d.open_notification()
    assert d(resourceId=SHADE).exists and d(text="No notifications").exists
    assert phone.active_window().root.rid == SHADE  # the active window: what getRootInActiveWindow gives
    d(text="New note").click()  # under the shade: the shade takes the tap
    assert phone.apps[NOTES].snapshot()["screen"] == "list"
    d.press("back")
    assert not d(resourceId=SHADE).exists and phone.current_package() == NOTES
    d.open_quick_settings()
    assert d(descriptionStartsWith="Internet").exists
    d(descriptionStartsWith="Airplane mode").click()  # the tile toggles the setting
    assert sim_device.shell("settings get global airplane_mode_on").strip() == "1"
    d.swipe(540, 1500, 540, 300, 0.1)  # swipe up on the shade closes it
    assert not d(resourceId=SHADE).exists
    d.swipe(540, 20, 540, 1200, 0.1)  # a swipe down from the status bar pulls it down
    assert d(resourceId=SHADE).exists
    d.press("home")
    assert not d(resourceId=SHADE).exists


def test_selector_flings_scroll_the_list(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    phone.do_launch(CONTACTS)
    lst = d(scrollable=True)
    assert lst.fling.vert.forward() is True
    assert phone.apps[CONTACTS].ui_state.scroll.get("contacts", 0) > 0
    lst.fling.toEnd()
    assert lst.fling.vert.forward() is False  # at the end: nothing moves
    lst.fling.toBeginning()
    assert phone.apps[CONTACTS].ui_state.scroll.get("contacts", 0) == 0
    assert lst.fling.vert.backward() is False


def test_drag_to_reorders_the_notes_list(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    phone.do_launch(NOTES)
    def titles() -> list[str]:
        return [n["title"] for n in phone.apps[NOTES].snapshot()["notes"]]  # type: ignore[attr-defined]

    first = titles()
    assert d(text=first[0]).drag_to(text=first[2]) is True  # object onto object
    after = titles()
    assert after[2] == first[0] and after != first
    b = d(text=after[2]).info["bounds"]
    top = d(text=after[0]).info["bounds"]
    d(text=after[2]).drag_to(b["left"] + 10, top["top"] + 10)  # object to a point: back to the top
    assert titles()[0] == first[0]


def test_pinch_is_accepted_and_changes_nothing_where_nothing_zooms(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    phone.do_launch(CONTACTS)
    before = phone.dump_xml()
    d(scrollable=True).pinch_in(percent=50, steps=10)
    d(scrollable=True).pinch_out()
    assert phone.dump_xml() == before
    assert any("two-finger gesture" in i for i in phone.ignored)


def test_toast_round_trip(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    d.toast.show("hello", 1.0)
    assert d.last_toast == "hello"
    d.clear_toast()
    assert d.last_toast is None


def test_ime_calls_on_a_phone_with_gboard_install_the_adb_keyboard_as_u2_does(sim_device: SimDevice) -> None:
    """``set_input_ime`` finds no AdbKeyboard in ``ime list``, installs uiautomator2's APK (adb
    install: push + ``pm install``), then enables and selects it; ``send_action`` and
    ``hide_keyboard`` broadcast to it."""
    phone = sim_device.phone
    assert sim_device.shell("settings get secure default_input_method").strip() == GBOARD
    assert sim_device.shell("ime list -s -a").split() == [GBOARD]
    d = _connect(sim_device)
    phone.do_launch(CONTACTS)
    d(resourceId="com.android.contacts:id/search_field").click()
    d.set_input_ime(True)
    assert phone.has_package("com.github.uiautomator")
    assert sim_device.shell("settings get secure default_input_method").strip() == ADB_KEYBOARD
    assert ADB_KEYBOARD in sim_device.shell("ime list -s -a").split()
    d.send_keys("ann")
    assert phone.apps[CONTACTS].ui_state.fields.get("search") == "ann"
    d.send_action("search")  # the field's IME action: Enter
    d.hide_keyboard()
    d.set_input_ime(False)
    assert sim_device.shell("settings get secure default_input_method").strip() == GBOARD


def test_an_apk_that_is_not_u2s_does_not_install_the_adb_keyboard(sim_device: SimDevice) -> None:
    sim_device.phone.write_file("/data/local/tmp/other.apk", b"PK\x05\x06" + b"\0" * 18)
    sim_device.adb.run("shell", "pm install -r -t /data/local/tmp/other.apk", serial=sim_device.serial, check=False)
    assert ADB_KEYBOARD not in sim_device.shell("ime list -s -a").split()


def test_child_by_text_scrolls_to_the_row_and_names_an_object_later_calls_use(sim_device: SimDevice) -> None:
    d = _connect(sim_device)
    phone = sim_device.phone
    phone.do_launch(CONTACTS)
    name_view = "com.android.contacts:id/cliv_name_textview"
    row = d(scrollable=True).child_by_text("Oscar Quinn", resourceId=name_view)
    assert isinstance(row.selector, str)  # an object name handed out by the server
    assert row.get_text() == "Oscar Quinn" and phone.apps[CONTACTS].ui_state.scroll  # scrolled into view
    second = d(scrollable=True).child_by_instance(1, resourceId=name_view)
    assert second.exists and second.get_text() != "Oscar Quinn"
    row.click()
    assert d(text="Oscar Quinn").exists and not d(resourceId=name_view).exists  # the details screen
    assert not row.exists  # the name is re-resolved on the screen now shown: no list, no row
    with pytest.raises(u2.UiObjectNotFoundError):
        d(scrollable=True).child_by_text("Nobody Here", resourceId=name_view)
    with pytest.raises(u2.UiObjectNotFoundError):
        d.jsonrpc.getText("text:999")
