"""The phone's windows: the navigation bar (drawn, dumped, its buttons act like the keys), and
perception hit-testing the sim's multi-window dumps whatever order they list the windows in."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from sim_helpers import bounds, center, node, nodes, tap

from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import hit_test
from artemis_cli.perception.types import Target
from artemis_cli.sim import SimPhone

NAV = "com.android.systemui:id/navigation_bar_frame"
BACK = "com.android.systemui:id/back"
HOME = "com.android.systemui:id/home"
RECENTS = "com.android.systemui:id/recent_apps"


def _screen(phone: SimPhone) -> str:
    return str(phone.snapshot_state()["apps"][phone.current_app()]["ui"].get("screen"))


def test_navigation_bar_is_a_window_of_its_own_with_three_buttons(phone: SimPhone) -> None:
    bar = node(phone, resource_id=NAV)
    assert bounds(bar) == (0, 2274, 1080, 2400) and bar.get("package") == "com.android.systemui"
    buttons = [(n.get("content-desc"), bounds(n)) for n in nodes(phone, package="com.android.systemui",
                                                                 clickable="true")]
    assert buttons == [("Back", (152, 2274, 388, 2400)), ("Overview", (692, 2274, 928, 2400)),
                       ("Home", (422, 2274, 658, 2400))]
    small = SimPhone(width=720, height=1600, popups=False)
    assert bounds(node(small, resource_id=NAV)) == (0, 1516, 720, 1600)  # 126 px at 1080 wide, scaled


def test_navigation_bar_is_drawn_where_the_dump_says(phone: SimPhone) -> None:
    img = Image.open(io.BytesIO(phone.screenshot())).convert("RGB")
    bar = img.crop((0, 2274, 1080, 2400))
    assert img.getpixel((540, 2270)) != img.getpixel((540, 2280))  # the launcher ends, the bar begins
    for rid in (BACK, HOME, RECENTS):  # each button's glyph is inside its bounds
        l_, t, r, b = bounds(node(phone, resource_id=rid))
        assert len(img.crop((l_, t, r, b)).getcolors(1 << 16) or []) >= 2
    gap = img.crop((400, 2274, 420, 2400))  # between Back and Home: plain bar
    assert len(gap.getcolors(1 << 16) or []) == 1 and len(bar.getcolors(1 << 16) or []) > 1


def test_back_button_acts_as_back(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="Network & internet")
    assert _screen(phone) == "network"
    actions = phone.actions
    tap(phone, resource_id=BACK)
    assert _screen(phone) == "main" and phone.actions == actions + 1  # one tap, one action
    tap(phone, resource_id=BACK)
    assert phone.current_app() == "com.android.launcher3"


def test_back_button_hides_the_keyboard_then_closes_a_dialog(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="About phone")
    tap(phone, text="Device name")
    tap(phone, resource_id="com.android.settings:id/device_name_input")
    assert phone.keyboard_visible()
    tap(phone, resource_id=BACK)  # the keyboard goes first
    assert not phone.keyboard_visible() and nodes(phone, text="Device name", resource_id="android:id/alertTitle")
    tap(phone, resource_id=BACK)  # a modal dialog does not swallow the navigation bar
    assert not nodes(phone, resource_id="android:id/alertTitle") and _screen(phone) == "about"


def test_back_button_dismisses_the_popup_and_home_and_overview_go_home() -> None:
    p = SimPhone(seed=2, faults="popup_storm")
    p.launch("com.android.settings")
    p.key("back")
    p.launch("com.android.settings")
    assert p.snapshot_state()["popup_visible"]
    tap(p, resource_id=BACK)
    assert not p.snapshot_state()["popup_visible"] and p.current_app() == "com.android.settings"
    tap(p, resource_id=HOME)
    assert p.current_app() == "com.android.launcher3"
    p.launch("com.android.contacts")
    tap(p, resource_id=RECENTS)  # the sim has no overview screen: like the recents key, home
    assert p.current_app() == "com.android.launcher3"


def test_taps_between_the_buttons_do_nothing(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    phone.tap(20, 2337)
    phone.tap(540, 2280)  # Home's top edge: Home
    assert phone.current_app() == "com.android.launcher3"
    phone.launch("com.android.contacts")
    phone.tap(1060, 2390)  # right of Overview: still the bar, nothing there
    assert phone.current_app() == "com.android.contacts"


def test_shell_tap_on_the_back_button_is_back(phone: SimPhone) -> None:
    phone.launch("com.artemis.notes")
    tap(phone, content_desc="New note")
    x, y = center(node(phone, resource_id=BACK))
    phone.shell(f"input tap {x} {y}")
    assert phone.current_app() == "com.artemis.notes" and _screen(phone) == "list"


# --- perception over the sim's dumps ------------------------------------------------------------


def _describe(t: Target) -> tuple[str, str, str]:
    return (t.resource_id, t.text, t.content_desc)


def _hits(phone: SimPhone, points: dict[str, tuple[int, int]]) -> tuple[list[list[str]], dict[str, set[tuple[str, str, str]]]]:
    """Dump 16 times (16 window orders) and hit-test each point in each dump."""
    orders: list[list[str]] = []
    seen: dict[str, set[tuple[str, str, str]]] = {k: set() for k in points}
    for _ in range(16):
        tree = parse_hierarchy(phone.hierarchy(), screen_size=(1080, 2400))
        orders.append([n.package + "|" + n.resource_id for n in tree.nodes if n.depth == 0])
        for name, (x, y) in points.items():
            seen[name].add(_describe(hit_test(tree, x, y)))
    return orders, seen


def test_perception_hit_tests_bars_and_app_whatever_the_window_order(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    back = center(node(phone, resource_id=BACK))
    orders, seen = _hits(phone, {"back": back, "clock": (100, 48), "app": (540, 518), "fab": (948, 2118)})
    assert len({tuple(o) for o in orders}) >= 3  # the dumps really listed the windows in different orders
    assert seen["back"] == {(BACK, "", "Back")}
    assert seen["clock"] == {("com.android.systemui:id/clock", "9:00", "")}
    assert seen["app"] == {("com.android.contacts:id/contact_row", "", "Alice Anderson")}
    assert seen["fab"] == {("com.android.contacts:id/floating_action_button", "", "Create contact")}


@pytest.mark.parametrize("where", ["keyboard", "dialog"])
def test_perception_hit_tests_the_keyboard_and_a_dialog_over_the_app(phone: SimPhone, where: str) -> None:
    if where == "keyboard":
        phone.launch("com.android.contacts")
        tap(phone, resource_id="com.android.contacts:id/search_field")
        q = center(node(phone, content_desc="q"))
        points = {"key": q, "back": center(node(phone, resource_id=BACK))}
        want = {"key": {("com.google.android.inputmethod.latin:id/key_pos_0_0", "", "q")},
                "back": {(BACK, "", "Back")}}
        # the keyboard covers Julia Lopez's row: a tap there types instead
        assert nodes(phone, content_desc="Julia Lopez") and q[1] > 1514
    else:
        phone.launch("com.android.contacts")
        tap(phone, content_desc="Alice Anderson")
        tap(phone, text="Delete")
        cancel = center(node(phone, resource_id="android:id/button2"))
        points = {"cancel": cancel, "back": center(node(phone, resource_id=BACK)), "status": (100, 48)}
        want = {"cancel": {("android:id/button2", "Cancel", "")}, "back": {(BACK, "", "Back")},
                "status": {("com.android.systemui:id/clock", "9:00", "")}}
    orders, seen = _hits(phone, points)
    assert len({tuple(o) for o in orders}) >= 3
    assert seen == want
