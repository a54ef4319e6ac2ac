"""Action outcomes (SPEC §15) on the simulated phone: every result says what observably happened,
and ``ok`` only when the intended effect was seen."""

from __future__ import annotations

from dataclasses import replace

import pytest
from outcome_support import act, tap, type_into

from artemis_cli.operators import outcome
from artemis_cli.operators.outcome import landing_problem
from artemis_cli.perception.types import Bounds, UINode
from artemis_cli.sim.phone import SimPhone


def _settings(phone: SimPhone) -> None:
    phone.shell("settings put global wifi_on 0")
    phone.launch("com.android.settings")
    tap(phone, text="Network & internet")


def test_a_switch_tap_says_the_switch_is_now_on() -> None:
    phone = SimPhone(popups=False)
    _settings(phone)
    done = tap(phone, rid="wifi_switch")
    assert done.outcome.status == "ok"
    assert done.outcome.summary == 'Switch "Wi-Fi" (id wifi_switch) now ON'
    assert done.outcome.states[0]["before"] == "OFF" and done.outcome.states[0]["now"] == "ON"
    assert phone.settings.flag("global", "wifi_on")
    again = tap(phone, rid="wifi_switch")
    assert again.outcome.summary == 'Switch "Wi-Fi" (id wifi_switch) now OFF'


def test_nothing_visible_changed_is_no_change_even_when_the_status_bar_clock_ticks() -> None:
    phone = SimPhone(popups=False)
    while phone.actions % 10 != 9:  # the sim's clock moves a minute every 10 actions
        phone.key("home")
    done = act(phone, "press_key", key="home")
    assert done.pre.xml != done.post.xml, "the clock in the status bar moved"
    assert done.outcome.status == "no_change"
    assert done.outcome.detail == "no visible change"
    assert done.outcome.screen_changed is False and done.outcome.ui_changed is False
    swipe = act(phone, "swipe", x1=540, y1=150, x2=540, y2=120)  # too short: the sim ignores it
    assert swipe.outcome.status == "no_change"


def test_launch_says_which_app_is_now_in_front() -> None:
    phone = SimPhone(popups=False)
    done = act(phone, "launch_app", app="com.android.settings")
    assert done.outcome.status == "ok"
    assert done.outcome.summary == "app now com.android.settings"
    assert (done.outcome.app_before, done.outcome.app_after) == ("com.android.launcher3", "com.android.settings")


def test_a_dialog_opening_and_closing_is_named() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.deskclock")
    opened = tap(phone, desc="Add alarm")
    assert opened.outcome.summary == 'new window "Set alarm" (com.android.deskclock)'
    closed = tap(phone, text="Cancel")
    assert closed.outcome.status == "ok"
    assert 'window "Set alarm" (com.android.deskclock) closed' in closed.outcome.summary


def test_typed_text_that_shows_in_its_field_is_ok() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.contacts")
    tap(phone, desc="Create contact")
    done = type_into(phone, "Sofia", "first_name")
    assert done.outcome.status == "ok"
    assert done.outcome.summary == 'the field shows "Sofia"'
    assert done.outcome.text_field is not None and done.outcome.text_field["landed"] is True


def _storm_at_next_action(phone: SimPhone, before_popup: int) -> None:
    """Make the promotion pop-up appear after ``before_popup`` more actions (popup_storm: every
    3 actions counted while it is hidden)."""
    while phone.popups.other_count != (3 - before_popup) % 3 or phone.popup_visible:
        if phone.popup_visible:
            tap(phone, text="No thanks")
        else:
            phone.key("back") if phone.apps[phone.foreground].ui_state.focus else phone.tap(5, 2300)


def _editor(faults: str | None = "popup_storm") -> SimPhone:
    phone = SimPhone(popups=True, faults=faults, seed=4)
    phone.launch("com.android.contacts")
    if phone.popup_visible:
        tap(phone, text="No thanks")
    tap(phone, desc="Create contact")
    if phone.popup_visible:
        tap(phone, text="No thanks")
    return phone


def test_a_popup_after_the_focusing_tap_is_noticed_and_nothing_is_typed() -> None:
    phone = _editor()
    _storm_at_next_action(phone, 1)  # the focusing tap brings the pop-up
    ignored = len(phone.ignored)
    done = type_into(phone, "Sofia", "first_name")
    assert phone.popup_visible
    assert done.outcome.status == "failed"
    assert done.outcome.detail == (
        'a new window appeared after the focusing tap: "Special offer!" (com.artemis.promo); nothing was typed'
    )
    assert phone.apps["com.android.contacts"].ui_state.fields.get("first_name", "") == ""
    assert phone.ignored[ignored:] == [], "nothing was typed blindly into the pop-up"


def test_text_lost_to_a_popup_after_the_clear_is_a_failed_step() -> None:
    phone = _editor()
    tap(phone, rid="first_name")
    phone.type_text("Sofiaa")
    _storm_at_next_action(phone, 2)  # focusing tap, then the clear brings the pop-up
    done = type_into(phone, "Sofia", "first_name", clear=True)
    assert phone.popup_visible
    assert done.outcome.status == "failed"
    assert done.outcome.detail == "text did not land: the field is empty"
    assert done.outcome.text_field == {
        "label": "field (id first_name)", "password": False, "shows": "", "length": 0,
        "cleared": True, "submitted": False, "landed": False,
    }
    assert done.outcome.summary == 'new window "Special offer!" (com.artemis.promo)'


def test_clear_is_one_action_and_replaces_the_whole_text() -> None:
    phone = _editor(faults=None)
    tap(phone, rid="first_name")
    phone.type_text("+1 555-0102")
    before = phone.actions
    done = type_into(phone, "+1 555-0177", "first_name", clear=True)
    assert phone.actions - before == 3  # focusing tap, one clear, one type
    assert done.outcome.status == "ok" and done.outcome.summary == 'the field shows "+1 555-0177"'


def test_submit_checks_the_field_before_pressing_enter() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.contacts")
    done = type_into(phone, "Ben", "search_field", submit=True)
    assert done.outcome.status == "ok"
    assert done.outcome.summary.startswith('the field shows "Ben"; submitted')
    assert done.outcome.text_field is not None and done.outcome.text_field["submitted"] is True


def test_typing_without_an_index_needs_a_focused_field() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.contacts")
    done = act(phone, "type_text", text="Ben")
    assert done.outcome.status == "failed"
    assert done.outcome.detail == "no text field is focused; nothing was typed (give the field's index)"
    assert not any(i.startswith("type_text") for i in phone.ignored)


def _field(text: str, *, password: bool = False, hint: str = "") -> UINode:
    return UINode(path="0.1", depth=1, class_name="android.widget.EditText", text=text,
                  resource_id="app:id/f", bounds=Bounds(0, 0, 10, 10), password=password, hint=hint)


@pytest.mark.parametrize(
    ("before", "typed", "after", "cleared", "landed"),
    [
        ("Phone", "+1 555-0177", "+1 555-0177", False, True),  # the hint was shown
        ("Milk, eggs", ", bananas", "Milk, eggs, bananas", False, True),  # appended
        ("8", "6", "6", False, True),  # a field that replaces its text on focus
        ("+1 555-0102", "+1 555-0177", "+1 555-0177", True, True),
        ("+1 555-0102", "+1 555-0177", "+", True, False),  # the lost phone number
        ("+1 555-0102", "+1 555-0177", "+1 555-0102+1 555-0177", True, False),  # not cleared
        ("", "5550177", "555-0177", False, True),  # the field formats the number
        ("Title", "Badge, laptop", "Title", False, False),  # nothing landed
        ("abc", "", "", True, True),  # a plain clear
        ("abc", "", "abc", True, False),
    ],
)
def test_landing_rules(before: str, typed: str, after: str, cleared: bool, landed: bool) -> None:
    assert (landing_problem(before, typed, _field(after), cleared=cleared) is None) is landed


def test_password_fields_compare_the_length_only_and_never_quote_text() -> None:
    assert landing_problem("Password", "hunter22", _field("••••••••", password=True), cleared=False) is None
    assert landing_problem("•••", "ab", _field("•••••", password=True), cleared=False) is None
    problem = landing_problem("Password", "hunter22", _field("•••", password=True), cleared=False)
    assert problem == "text did not land: the password field holds 3 characters, 8 were typed"
    shown = landing_problem("Password", "hunter22", _field("Password", password=True), cleared=False)
    assert shown is not None and "holds 0 characters" in shown


def test_a_hint_the_dump_names_counts_as_empty() -> None:
    assert landing_problem("", "Sofia", _field("Sofia", hint="First name"), cleared=False) is None
    problem = landing_problem("", "Sofia", _field("First name", hint="First name"), cleared=False)
    assert problem == "text did not land: the field is empty"


def test_password_text_is_never_quoted_even_from_a_field_that_shows_it() -> None:
    """A password field with "show password" on dumps plain text and password=false."""
    assert landing_problem("", "hunter22", _field("hunter22"), cleared=False, secret=True) is None
    problem = landing_problem("", "hunter22", _field("hunter2"), cleared=False, secret=True)
    assert problem == "text did not land in the password field"


def test_a_typed_password_is_reported_by_its_length() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.artemis.shop")
    done = type_into(phone, "artemis123", "password")
    assert done.outcome.status == "ok"
    assert done.outcome.summary == "password field (id password) holds 10 characters"
    assert "artemis123" not in repr(done.outcome.to_dict())


def test_a_back_that_hid_the_keyboard_says_so() -> None:
    """Android's first back with the keyboard up only hides it: the answer says that, so the model
    does not take the ok for "went back"; the next back, with the keyboard down, leaves the form."""
    phone = SimPhone(seed=31, popups=False)
    phone.launch("com.android.contacts")
    tap(phone, desc="Create contact")
    typed = type_into(phone, "Priya", "first_name")
    assert typed.post.keyboard_shown
    hid = act(phone, "press_key", key="back")
    assert (hid.pre.keyboard_shown, hid.post.keyboard_shown) == (True, False)
    assert hid.outcome.status == "ok"
    assert hid.outcome.reply_fields() == {"observed": "back hid the keyboard; nothing else changed"}
    left = act(phone, "press_key", key="back")
    assert "keyboard" not in left.outcome.summary and left.outcome.text.replaced


def test_a_screen_is_signed_once_however_often_it_is_judged_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step's screen is signed for its judgement (pre and post), its loop check and its record,
    and the post screen is the next step's screen: each tree's signature and fingerprint are built
    once and kept on it, the same values every time (counted by the nodes looked at)."""
    phone = SimPhone(popups=False)
    _settings(phone)
    done = tap(phone, rid="wifi_switch")
    pre = replace(done.pre, tree=replace(done.pre.tree))  # the same screens, not yet signed
    post = replace(done.post, tree=replace(done.post.tree))
    expected = (outcome.ui_signature(done.pre.tree), outcome.screen_fingerprint(done.pre))
    looked = {"nodes": 0}
    real = outcome._ticking

    def counting(node: UINode) -> bool:
        looked["nodes"] += 1
        return real(node)

    monkeypatch.setattr(outcome, "_ticking", counting)
    assert (outcome.ui_signature(pre.tree), outcome.screen_fingerprint(pre)) == expected
    one_pre = looked["nodes"]
    assert one_pre > 0
    for _ in range(3):
        assert (outcome.ui_signature(pre.tree), outcome.screen_fingerprint(pre)) == expected
        assert outcome.assess(done.action, done.result, pre, post).ui_changed
        outcome.screen_fingerprint(post)
    total = looked["nodes"]
    outcome.ui_signature(replace(post.tree))  # what signing the post screen once costs
    assert total == one_pre + (looked["nodes"] - total)
