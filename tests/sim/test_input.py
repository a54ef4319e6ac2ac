from __future__ import annotations

import pytest
from sim_helpers import bounds, center, login, node, nodes, tap

from artemis_cli.errors import ShellError, UsageError
from artemis_cli.sim import SimPhone
from artemis_cli.sim.keyboard import KeyboardState, layout


def test_launcher_icons_open_apps_and_home_returns(phone: SimPhone) -> None:
    assert phone.current_app() == "com.android.launcher3"
    for label, pkg in [("Settings", "com.android.settings"), ("Shop", "com.artemis.shop")]:
        tap(phone, content_desc=label, text=label)
        assert phone.current_app() == pkg
        phone.key("home")
        assert phone.current_app() == "com.android.launcher3"


def test_launch_unknown_package_is_a_shell_error(phone: SimPhone) -> None:
    with pytest.raises(ShellError):
        phone.launch("com.example.nope")
    with pytest.raises(UsageError):
        phone.key("volume_up_please")


def test_dialog_is_on_top_and_modal(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    tap(phone, content_desc="Alice Anderson")
    tap(phone, text="Delete")
    # a tap outside the dialog (on the Edit action under the scrim) does nothing
    edit_xy = center(node(phone, text="Edit"))
    phone.tap(*edit_xy)
    assert phone.snapshot_state()["apps"]["com.android.contacts"]["ui"]["screen"] == "details"
    assert nodes(phone, text="Delete this contact?")
    tap(phone, resource_id="android:id/button2")  # Cancel
    assert not nodes(phone, text="Delete this contact?")
    tap(phone, text="Delete")
    tap(phone, resource_id="android:id/button1")
    assert not nodes(phone, content_desc="Alice Anderson")


def test_scrolling_reveals_new_rows(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    first = {n.get("text") for n in nodes(phone, resource_id="com.android.contacts:id/cliv_name_textview")}
    assert "Oscar Quinn" not in first
    phone.swipe(540, 100, 540, 50)  # too short / in the status bar: ignored
    phone.swipe(540, 2000, 540, 900)
    after = {n.get("text") for n in nodes(phone, resource_id="com.android.contacts:id/cliv_name_textview")}
    assert "Oscar Quinn" in after and "Alice Anderson" not in after
    phone.swipe(540, 900, 540, 2000)
    back = {n.get("text") for n in nodes(phone, resource_id="com.android.contacts:id/cliv_name_textview")}
    assert "Alice Anderson" in back


def test_type_enter_back_delete_semantics(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    phone.type_text("ignored")  # nothing focused: recorded, no crash
    assert phone.snapshot_state()["ignored_inputs"][-1].startswith("type_text")
    tap(phone, resource_id="com.android.contacts:id/search_field")
    assert phone.snapshot_state()["keyboard"] is True
    phone.type_text("gracx")
    phone.key("delete")
    phone.type_text("e")
    names = [n.get("text") for n in nodes(phone, resource_id="com.android.contacts:id/cliv_name_textview")]
    assert names == ["Grace Ito"]
    phone.key("enter")  # submits the search: keyboard hides
    assert phone.snapshot_state()["keyboard"] is False
    tap(phone, resource_id="com.android.contacts:id/search_field")
    phone.key("back")  # first back hides the keyboard
    assert phone.snapshot_state()["keyboard"] is False
    assert phone.current_app() == "com.android.contacts"
    phone.key("back")  # then clears the search
    assert len(nodes(phone, resource_id="com.android.contacts:id/cliv_name_textview")) > 5
    phone.key("back")
    assert phone.current_app() == "com.android.launcher3"


def test_keyboard_taps_type_letters(phone: SimPhone) -> None:
    phone.launch("com.artemis.notes")
    tap(phone, content_desc="New note")
    tap(phone, resource_id="com.artemis.notes:id/title")
    keys = {k.label: k for k in layout(1080, phone.app_height, KeyboardState())}  # above the nav bar
    for ch in "hi":
        r = keys[ch].rect
        phone.tap((r[0] + r[2]) // 2, (r[1] + r[3]) // 2)
    assert node(phone, resource_id="com.artemis.notes:id/title").get("text") == "hi"
    r = keys["Enter"].rect
    phone.tap((r[0] + r[2]) // 2, (r[1] + r[3]) // 2)  # enter in the title moves to the body
    assert node(phone, resource_id="com.artemis.notes:id/body").get("focused") == "true"


def test_long_press_and_shell_swipe_equivalents(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    x, y = center(node(phone, resource_id="com.artemis.shop:id/username"))
    phone.shell(f"input swipe {x} {y} {x} {y} 600")  # long press focuses a text field
    assert node(phone, resource_id="com.artemis.shop:id/username").get("focused") == "true"
    phone.shell("input text de%smo")
    assert phone.snapshot_state()["apps"]["com.artemis.shop"]["fields"]["username"] == "de mo"


def test_tap_outside_screen_is_ignored(phone: SimPhone) -> None:
    phone.tap(-5, 99999)
    assert "outside" in phone.snapshot_state()["ignored_inputs"][-1]


def test_partially_visible_row_is_tappable_in_its_clipped_bounds(phone: SimPhone) -> None:
    login(phone)
    lst = node(phone, resource_id="com.artemis.shop:id/product_list")
    last_row = list(lst)[-1]
    assert bounds(last_row)[3] == bounds(lst)[3]
