"""Drawing order inside a window (issue 25): a later sibling drawn over an earlier one takes the
touch, in the sim's own tap rule and in perception's hit test alike, and the two agree on every
point of every screen the sim shows.

The Clock's floating "Add alarm" button floats over the alarm list; with six alarms the sixth
row's Delete button lies under it.  The old rule of both (the smallest clickable node) sent a tap
on the FAB's centre to Delete.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import cast

import pytest
from sim_helpers import node, tap

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import TEXT, HitIndex, hit_test
from artemis_cli.perception.types import UINode, UITree
from artemis_cli.sim import SimPhone
from artemis_cli.sim import widgets as W

CLOCK = "com.android.deskclock"
FAB = f"{CLOCK}:id/fab"


def new_phone(**options: object) -> SimPhone:
    return cast(SimPhone, sim_for(SimOptions(popups=False, permission_prompts=False, **options)))


def clock_with_six_alarms() -> SimPhone:
    phone = new_phone()
    phone.launch(CLOCK)
    for _ in range(4):  # each: the FAB (nothing under it yet), then OK: an 8:00 AM alarm
        tap(phone, resource_id=FAB)
        tap(phone, resource_id="android:id/button1")
    return phone


def fab_over_a_button(phone: SimPhone) -> tuple[int, int, W.Widget]:
    """The FAB's centre, and the row's button drawn under it there."""
    fab = node(phone, resource_id=FAB)
    l_, t, r, b = map(int, fab.get("bounds", "").replace("][", ",").strip("[]").split(","))
    x, y = (l_ + r) // 2, (t + b) // 2
    under = [w for win in phone.windows() for w in win.root.walk()
             if w.clickable and w.rid != FAB and W.contains(w.bounds, x, y)]
    assert under, "the test needs a row's button under the FAB"
    return x, y, min(under, key=lambda w: W.area(w.bounds))


def test_a_tap_on_the_fab_over_a_row_opens_the_set_alarm_dialog() -> None:
    phone = clock_with_six_alarms()
    x, y, under = fab_over_a_button(phone)
    assert under.text == "Delete" and W.area(under.bounds) < W.area(phone.widget_at(x, y).bounds)  # type: ignore[union-attr]
    assert phone.widget_at(x, y).rid == FAB  # type: ignore[union-attr]
    target = hit_test(parse_hierarchy(phone.hierarchy()), x, y)
    assert (target.resource_id, target.content_desc) == (FAB, "Add alarm")
    alarms = len(phone.apps[CLOCK].alarms)  # type: ignore[attr-defined]
    phone.tap(x, y)
    assert node(phone, resource_id="android:id/alertTitle").get("text") == "Set alarm"
    assert len(phone.apps[CLOCK].alarms) == alarms  # type: ignore[attr-defined]  # nothing deleted


def test_a_swipe_that_starts_on_the_fab_scrolls_nothing() -> None:
    phone = clock_with_six_alarms()
    x, y, _ = fab_over_a_button(phone)
    scroll = phone.apps[CLOCK].ui_state.scroll
    assert scroll.get("alarms", 0) == 0
    phone.swipe(x, y, x, y - 600)
    assert scroll.get("alarms", 0) == 0  # the FAB took the touch: the list never saw the move
    phone.swipe(300, y, 300, y - 600)  # beside the FAB, on the list: it scrolls
    assert scroll.get("alarms", 0) > 0


# --- every screen: the sim's widget and perception's target are the same element --------------


def _key_w(w: W.Widget) -> tuple[object, ...]:
    return (w.cls, w.rid, w.text, w.desc, w.bounds)


def _key_n(n: UINode) -> tuple[object, ...]:
    b = n.bounds
    return (n.class_name, n.resource_id, n.text, n.content_desc, (b.left, b.top, b.right, b.bottom))


def _swallowed(phone: SimPhone, x: int, y: int) -> bool:
    """A modal window or an open menu above takes a touch outside it (a dump cannot show that)."""
    for win in reversed(phone.windows()):
        if W.contains(win.root.bounds, x, y):
            return False
        if win.modal or win.dismiss is not None:
            return True
    return False


def _ancestors(tree: UITree, index: HitIndex, i: int) -> Iterator[int]:
    p = index.structure.parent[i]
    while p >= 0:
        yield p
        p = index.structure.parent[p]


def check_agreement(phone: SimPhone, rng: random.Random, points: int = 120) -> int:
    """Random points of the screen: perception's hit (on both dumps) names the sim's widget. The
    shell's dump holds the active window only (as a phone's): it is checked at the points that
    window takes (no window drawn above it takes the touch there)."""
    shell, u2 = parse_hierarchy(phone.dump_xml()), parse_hierarchy(phone.u2_dump())
    active = phone.active_window()
    checked = 0
    for _ in range(points):
        x, y = rng.randrange(phone.width), rng.randrange(phone.height)
        if _swallowed(phone, x, y):
            continue
        w = phone.widget_at(x, y)
        trees = [u2, shell] if phone._window_at(x, y) is active else [u2]
        for tree in trees:
            index = HitIndex.of(tree)
            i = index.hit(x, y)
            where = (x, y, w and _key_w(w), i is not None and _key_n(tree.nodes[i]))
            if w is None:  # nothing takes it: perception names at most a label
                assert i is None or index.kinds[i] == TEXT, where
            elif w.scrollable and not w.clickable:  # a list: the list, or the text under the finger
                assert i is not None, where
                assert _key_n(tree.nodes[i]) == _key_w(w) or (
                    index.kinds[i] == TEXT
                    and any(_key_n(tree.nodes[a]) == _key_w(w) for a in _ancestors(tree, index, i))
                ), where
            else:
                assert i is not None and _key_n(tree.nodes[i]) == _key_w(w), where
        checked += 1
    return checked


def _screens() -> Iterator[tuple[str, Callable[[], SimPhone]]]:
    def launched(package: str) -> Callable[[], SimPhone]:
        def make() -> SimPhone:
            phone = new_phone()
            phone.launch(package)
            return phone

        return make

    yield "launcher", new_phone
    for package in ("com.android.settings", CLOCK, "com.android.contacts", "com.artemis.notes", "com.artemis.shop"):
        yield package, launched(package)
    yield "clock-six-alarms", clock_with_six_alarms

    def picker_with_keyboard() -> SimPhone:
        phone = clock_with_six_alarms()
        tap(phone, resource_id=FAB)
        tap(phone, resource_id=f"{CLOCK}:id/label_input")
        assert phone.keyboard_visible()
        return phone

    yield "clock-picker-keyboard", picker_with_keyboard
    yield "popup", lambda: cast(SimPhone, sim_for(SimOptions(popups=True, seed=3)))


SCREENS = dict(_screens())


@pytest.mark.parametrize("name", list(SCREENS))
def test_sim_and_perception_agree_on_every_point(name: str) -> None:
    rng = random.Random(f"touch-order|{name}")
    phone = SCREENS[name]()
    assert check_agreement(phone, rng) > 0
    # and on the screens a few taps away: wherever a random walk of taps on what the screen
    # offers leads (seeded), every point still agrees
    for _ in range(6):
        clickable = [w for win in phone.windows() for w in win.root.walk() if w.clickable and w.enabled]
        if not clickable:
            break
        w = rng.choice(clickable)
        phone.tap(*((w.bounds[0] + w.bounds[2]) // 2, (w.bounds[1] + w.bounds[3]) // 2))
        check_agreement(phone, rng, points=60)
