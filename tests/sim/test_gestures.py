"""Double taps and drags on the simulated phone, timed and told apart as Android does (sim/gestures.py):
two taps within 300 ms at one spot are a double tap, slower ones two taps; a drag holds before it moves,
a swipe does not. In-process, through the phone's shell (`input`), and the keyboard's dumpsys answer."""

from __future__ import annotations

import pytest
from sim_helpers import center, login, node, nodes

from artemis_cli.sim import SimPhone
from artemis_cli.sim.gestures import DOUBLE_TAP_TIMEOUT_MS, TapTracker

MOUSE = "com.artemis.shop:id/product_name"


def _liked(phone: SimPhone) -> list[str]:
    return list(phone.apps["com.artemis.shop"].snapshot().get("liked", []))  # type: ignore[call-overload]


def _mouse(phone: SimPhone) -> tuple[int, int]:
    return center(node(phone, resource_id=MOUSE, text="Wireless Mouse"))


def _notes(phone: SimPhone) -> list[str]:
    return [str(n["title"]) for n in phone.apps["com.artemis.notes"].query("notes") or []]


def _row(phone: SimPhone, title: str) -> tuple[int, int]:
    return center(node(phone, resource_id="com.artemis.notes:id/note_item", content_desc=title))


def test_double_tap_likes_a_product_and_shows_it(phone: SimPhone) -> None:
    login(phone)
    x, y = _mouse(phone)
    assert not nodes(phone, resource_id="com.artemis.shop:id/product_liked")
    phone.double_tap(x, y)
    assert _liked(phone) == ["Wireless Mouse"]
    assert node(phone, resource_id="com.artemis.shop:id/product_liked").get("text") == "Liked"
    phone.double_tap(x, y)  # again: unliked
    assert _liked(phone) == []


def test_two_separate_taps_are_not_a_double_tap(phone: SimPhone) -> None:
    login(phone)
    x, y = _mouse(phone)
    phone.tap(x, y)
    phone.tap(x, y)  # another protocol call: an agent's next step, far more than 300 ms later
    assert _liked(phone) == []


def test_a_double_tap_on_a_button_is_two_presses(phone: SimPhone) -> None:
    login(phone)
    phone.double_tap(*center(node(phone, content_desc="Add Wireless Mouse to cart")))
    assert phone.apps["com.artemis.shop"].snapshot()["cart"] == {"Wireless Mouse": 2}
    assert _liked(phone) == []  # the button takes the touches: the row never sees a double tap


def test_shell_taps_in_one_command_are_a_double_tap_slow_ones_are_not(phone: SimPhone) -> None:
    login(phone)
    x, y = _mouse(phone)
    assert phone.run(f"input tap {x} {y}; input tap {x} {y}").exit_code == 0
    assert _liked(phone) == ["Wireless Mouse"]
    assert phone.run(f"sleep 1; input tap {x} {y}; sleep 0.4; input tap {x} {y}").exit_code == 0
    assert _liked(phone) == ["Wireless Mouse"]  # 400 ms apart: two taps, nothing toggled
    # (each command starts a second later: right after the last tap, its first tap would pair with it)
    assert phone.run(f"sleep 1; input tap {x} {y}; input tap {x + 150} {y}").exit_code == 0
    assert _liked(phone) == ["Wireless Mouse"]  # too far apart for one double tap


@pytest.mark.parametrize(("gap", "double"), [(0, False), (39, False), (40, True), (300, True), (301, False)])
def test_the_double_tap_window(gap: float, double: bool) -> None:
    taps = TapTracker()
    assert not taps.tap(1000.0, 10, 10)
    assert taps.tap(1000.0 + gap, 12, 11) is double
    assert DOUBLE_TAP_TIMEOUT_MS == 300


def test_drag_reorders_notes_a_swipe_does_not(phone: SimPhone) -> None:
    phone.launch("com.artemis.notes")
    assert _notes(phone) == ["Groceries", "Meeting notes", "Ideas"]
    (x1, y1), (x2, y2) = _row(phone, "Ideas"), _row(phone, "Groceries")
    phone.swipe(x1, y1, x2, y2, 300)  # a fast swipe: the list (shorter than the screen) does not move
    assert _notes(phone) == ["Groceries", "Meeting notes", "Ideas"]
    phone.drag(x1, y1, x2, y2)
    assert _notes(phone) == ["Ideas", "Groceries", "Meeting notes"]
    titles = [n.get("text") for n in nodes(phone, resource_id="android:id/title")]
    assert titles[:3] == ["Ideas", "Groceries", "Meeting notes"]  # the screen shows the new order


def test_input_draganddrop_drags_and_is_in_the_usage(phone: SimPhone) -> None:
    phone.launch("com.artemis.notes")
    (x1, y1), (x2, y2) = _row(phone, "Groceries"), _row(phone, "Ideas")
    res = phone.run(f"input draganddrop {x1} {y1} {x2} {y2} 800")
    assert res.exit_code == 0, res.output
    assert _notes(phone) == ["Meeting notes", "Ideas", "Groceries"]
    bad = phone.run("input draganddrop 1 2 3")
    assert bad.exit_code == 1 and b"draganddrop <x1> <y1> <x2> <y2>" in bad.output


def test_a_drag_on_nothing_draggable_is_a_long_press_and_says_so(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    before = phone.dump_xml()
    phone.drag(540, 1500, 540, 900)
    assert phone.ignored[-1].startswith("drag 540,1500->540,900: nothing draggable there")
    assert phone.dump_xml() == before


def test_dumpsys_input_method_says_whether_the_keyboard_is_shown(phone: SimPhone) -> None:
    assert "mInputShown=false" in phone.shell("dumpsys input_method")
    phone.launch("com.android.contacts")
    phone.tap(540, 344)  # "Search contacts" takes focus: the keyboard comes up
    assert phone.keyboard_visible()
    out = phone.shell("dumpsys input_method")
    assert "mInputShown=true" in out and "mImeWindowVis=0x3" in out


def test_input_motionevent_held_before_moving_drags_moved_at_once_swipes(phone: SimPhone) -> None:
    phone.launch("com.artemis.notes")
    (x1, y1), (x2, y2) = _row(phone, "Ideas"), _row(phone, "Groceries")
    quick = f"input motionevent DOWN {x1} {y1}; input motionevent MOVE {x2} {y2}; input motionevent UP {x2} {y2}"
    assert phone.run(quick).exit_code == 0  # 150 ms between the events: no hold, a swipe
    assert _notes(phone) == ["Groceries", "Meeting notes", "Ideas"]
    held = (f"input motionevent DOWN {x1} {y1}; sleep 0.6; input motionevent MOVE {x2} {y2}; "
            f"input motionevent UP {x2} {y2}")
    assert phone.run(held).exit_code == 0
    assert _notes(phone) == ["Ideas", "Groceries", "Meeting notes"]
    assert phone.run("input motionevent SIDEWAYS 1 2").exit_code == 1
