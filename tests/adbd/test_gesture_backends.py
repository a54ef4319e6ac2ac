"""double_tap, drag and scroll over the real clients against the sim's adbd: the adb backend through
the real `adb` binary's server and adbutils (`input tap; input tap` in one command, `input
draganddrop`), the u2 backend through the real uiautomator2 client (its double_click and drag
RPCs); each checked by its effect on the phone. And keyboard_shown on both backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from adbd_support import SimDevice, needs_adb
from outcome_support import check_gestures, check_links_stops_and_keys, look

from artemis_cli.device.adb import AdbDevice
from artemis_cli.device.adb_output import parse_input_shown
from artemis_cli.device.u2 import U2Device
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb


def _liked(phone: SimPhone) -> list[str]:
    return list(phone.apps["com.artemis.shop"].snapshot().get("liked", []))  # type: ignore[call-overload]


def _logged_in_shop(phone: SimPhone) -> None:
    phone.do_launch("com.artemis.shop")
    phone.apps["com.artemis.shop"].user = "demo"  # type: ignore[attr-defined]
    phone.invalidate()


def test_gestures_over_adb(sim_device: SimDevice) -> None:
    dev = AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None)
    check_gestures(dev, sim_device.phone)


def test_gestures_over_uiautomator2(sim_device: SimDevice) -> None:
    dev = U2Device(sim_device.serial, port=sim_device.adb.port)
    try:
        check_gestures(dev, sim_device.phone)
    finally:
        dev.close()


def test_links_stops_and_keys_over_adb_and_u2(sim_device: SimDevice) -> None:
    check_links_stops_and_keys(AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None),
                               sim_device.phone)
    dev = U2Device(sim_device.serial, port=sim_device.adb.port)
    try:
        check_links_stops_and_keys(dev, sim_device.phone)
    finally:
        dev.close()


def test_the_real_adb_binary_double_taps_in_one_shell_command_not_in_two(sim_device: SimDevice) -> None:
    phone = sim_device.phone
    _logged_in_shop(phone)
    x, y = 365, 329  # "Wireless Mouse", the first product's name
    taker = phone.widget_at(x, y)  # not on a button: the list takes the touch, the row listens
    assert taker is not None and taker.scrollable and not taker.clickable  # (for double taps)
    sim_device.shell(f"input tap {x} {y}; input tap {x} {y}")
    assert _liked(phone) == ["Wireless Mouse"]
    sim_device.shell(f"sleep 1; input tap {x} {y}")
    sim_device.shell(f"sleep 1; input tap {x} {y}")  # a second later: two taps
    assert _liked(phone) == ["Wireless Mouse"]


@pytest.fixture
def both(sim_device: SimDevice) -> Iterator[tuple[AdbDevice, U2Device]]:
    adb = AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None)
    u2 = U2Device(sim_device.serial, port=sim_device.adb.port)
    yield adb, u2
    u2.close()


def test_keyboard_shown_over_adb_and_u2(sim_device: SimDevice, both: tuple[AdbDevice, U2Device]) -> None:
    adb, u2 = both
    phone = sim_device.phone
    assert adb.keyboard_shown() is False
    assert look(adb).keyboard_shown is False and look(u2).keyboard_shown is False
    phone.do_launch("com.android.contacts")
    phone.do_tap(540, 344)  # "Search contacts" takes focus: the keyboard comes up
    assert adb.keyboard_shown() is True  # dumpsys input_method, read through adb
    assert look(adb).keyboard_shown is True and look(u2).keyboard_shown is True
    assert "keyboard" in look(adb).timings  # read beside the other reads, not after them


@pytest.mark.parametrize(("text", "shown"), [
    ("  mInputShown=true\n", True), ("mShowRequested=true mInputShown=false\n", False),
    ("  mImeWindowVis=0x3\n", True), ("  mImeWindowVis=0x1\n", False), ("Can't find service: input_method\n", None),
])
def test_parse_input_shown(text: str, shown: bool | None) -> None:
    assert parse_input_shown(text) is shown


def test_uiautomator2_touch_events_hold_then_move_drag_a_quick_move_does_not(sim_device: SimDevice) -> None:
    """The real client's touch.down/move/up: held before moving is a drag, moved at once a swipe."""
    import adbutils
    import uiautomator2 as u2

    phone = sim_device.phone
    phone.do_launch("com.artemis.notes")
    d = u2.connect(adbutils.AdbClient(port=sim_device.adb.port).device(sim_device.serial))
    order = ["Groceries", "Meeting notes", "Ideas"]
    notes = phone.apps["com.artemis.notes"]
    ideas, groceries = 764, 364  # the rows' centres (x = 540)
    d.touch.down(540, ideas).move(540, 560).move(540, groceries).up(540, groceries)  # no hold
    assert [n.title for n in notes.notes] == order  # type: ignore[attr-defined]
    d.touch.down(540, ideas).sleep(0.6).move(540, 560).move(540, groceries).up(540, groceries)
    assert [n.title for n in notes.notes] == ["Ideas", "Groceries", "Meeting notes"]  # type: ignore[attr-defined]
