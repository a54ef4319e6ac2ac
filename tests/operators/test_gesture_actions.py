"""scroll, double_tap and drag as operator tools: validation errors for the model, planning (scroll
names the content's direction, the finger moves the other way; both ends of a drag hit-tested),
their effect and outcome on the in-process sim, phrases, and the keyboard line's source field."""

from __future__ import annotations

import pytest
from outcome_support import act, check_gestures, index_of, look

from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.act import execute, plan_action
from artemis_cli.operators.tools import MAX_SCROLLS, ToolCallError, validate_call
from artemis_cli.sim.faults import FaultInjector, parse_faults
from artemis_cli.sim.phone import SimPhone


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("scroll", {"direction": "down"}, {"direction": "down"}),
        ("scroll", {"direction": "up", "index": 2, "to_end": True}, {"direction": "up", "index": 2, "to_end": True}),
        ("scroll", {"direction": "left", "to_end": False}, {"direction": "left"}),
        ("double_tap", {"index": 1}, {"index": 1}),
        ("double_tap", {"x": 5, "y": 6}, {"x": 5.0, "y": 6.0}),
        ("drag", {"index": 1, "to_index": 4}, {"index": 1, "to_index": 4}),
        ("drag", {"x1": 1, "y1": 2, "to_index": 4}, {"x1": 1.0, "y1": 2.0, "to_index": 4}),
        ("drag", {"index": 1, "x2": 3, "y2": 4}, {"index": 1, "x2": 3.0, "y2": 4.0}),
    ],
)
def test_valid_calls_are_normalised(name: str, args: dict[str, object], expected: dict[str, object]) -> None:
    assert validate_call(FunctionCall(name, args)).args == expected


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("scroll", {}, "`direction` is required"),
        ("scroll", {"direction": "sideways"}, "`direction` must be one of up, down, left, right"),
        ("scroll", {"direction": "down", "to_end": "yes"}, "`to_end` must be true or false"),
        ("scroll", {"direction": "down", "index": -1}, "`index` must be ≥ 0"),
        ("double_tap", {"x": 3}, "give `index` (preferred) or both `x` and `y`"),
        ("drag", {"to_index": 2}, "give the drag's from: `index` (preferred) or both `x1` and `y1`"),
        ("drag", {"index": 2}, "give the drag's to: `to_index` (preferred) or both `x2` and `y2`"),
        ("drag", {"index": 2, "x2": "far", "y2": 3}, "`x2` must be a number"),
    ],
)
def test_malformed_calls_are_corrections(name: str, args: dict[str, object], message: str) -> None:
    with pytest.raises(ToolCallError) as err:
        validate_call(FunctionCall(name, args))
    assert message in str(err.value)


def test_scroll_moves_the_finger_against_the_content_inside_the_main_list() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    obs = look(phone)
    plans = {d: plan_action(validate_call(FunctionCall("scroll", {"direction": d})), obs) for d in
             ("down", "up", "left", "right")}
    down, up = plans["down"], plans["up"]
    assert down.y > down.y2 and up.y < up.y2  # type: ignore[operator]  # scroll down: the finger goes up
    assert plans["right"].x > plans["right"].x2 and plans["left"].x < plans["left"].x2  # type: ignore[operator]
    scrollable = max((e.node.bounds for e in obs.elements if e.node.scrollable), key=lambda b: b.area)
    assert scrollable.top <= down.y2 and down.y <= scrollable.bottom  # type: ignore[operator]
    assert down.phrase() == "scroll down"
    assert plan_action(validate_call(FunctionCall("scroll", {"direction": "up", "to_end": True})), obs).phrase() \
        == "scroll up to the end"
    swipe = plan_action(validate_call(FunctionCall("swipe", {"direction": "up"})), obs)
    assert (swipe.y > swipe.y2) == (down.y > down.y2)  # type: ignore[operator]  # swipe up = scroll down
    with pytest.raises(ToolCallError, match="no element with index 99"):
        plan_action(validate_call(FunctionCall("scroll", {"direction": "down", "index": 99})), obs)


def test_drag_ends_are_hit_tested_and_phrased() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.artemis.notes")
    obs = look(phone)
    planned = plan_action(validate_call(FunctionCall("drag", {"index": index_of(obs, desc="Ideas"),
                                                               "x2": 540, "y2": 380})), obs)
    assert planned.target.content_desc == "Ideas"
    assert planned.target_end is not None and planned.target_end.content_desc == "Groceries"
    assert planned.phrase().startswith("drag ") and " to " in planned.phrase()
    with pytest.raises(ToolCallError):
        plan_action(validate_call(FunctionCall("drag", {"index": 0, "to_index": 500})), obs)


def test_gestures_on_the_in_process_sim() -> None:
    phone = SimPhone(popups=False)
    check_gestures(phone, phone)


def test_a_double_tap_where_nothing_listens_is_honestly_a_tap_outcome() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    done = act(phone, "double_tap", x=540, y=2000)  # blank area below the settings list
    assert done.outcome.status == "no_change"


def test_scroll_to_end_is_bounded_when_the_content_never_stops() -> None:
    class Endless(SimPhone):
        """Every screenshot differs: the content never stops moving."""

        shots = 0

        def screenshot(self) -> bytes:
            self.shots += 1
            self.apps[self.foreground].ui_state.scroll.clear()
            self.settings.put("secure", "ui_night_mode", "2" if self.shots % 2 else "1")
            self.invalidate()
            return super().screenshot()

    phone = Endless(popups=False)
    phone.launch("com.android.settings")
    done = act(phone, "scroll", direction="down", to_end=True)
    assert done.result.swipes == MAX_SCROLLS and done.result.at_end is False
    assert f"scrolled {MAX_SCROLLS} times, the content was still moving" in done.outcome.summary


def test_keyboard_shown_comes_from_the_dump_on_the_sim() -> None:
    phone = SimPhone(popups=False)
    assert look(phone).keyboard_shown is False
    phone.launch("com.android.contacts")
    phone.tap(540, 344)  # "Search contacts": focus, the keyboard comes up
    assert look(phone).keyboard_shown is True


def test_scroll_to_end_stops_when_the_screen_cannot_be_watched() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    pre = look(phone)
    action = plan_action(validate_call(FunctionCall("scroll", {"direction": "down", "to_end": True})), pre)
    phone.faults = FaultInjector(parse_faults("screencap_fail:1.0"), 0)  # from now on every capture fails
    result = execute(action, phone, real_time=False)
    assert result.status == "ok" and result.swipes == 1 and result.at_end is None
    assert "could not be watched" in result.detail
    assert phone.apps["com.android.settings"].ui_state.scroll  # the swipe happened
