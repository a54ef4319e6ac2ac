"""MechanicalLens: deterministic, neutral, bounded summaries from the UI dumps (SPEC §8, §10.1),
on real screens of the simulated phone."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artemis_cli.memory.lens import VERDICT_WORDS, LensJob, verdict_words
from artemis_cli.memory.mechanical import MAX_MECHANICAL_CHARS, MechanicalLens, describe_step
from artemis_cli.sim import SimPhone

PACKAGES = ["com.android.settings", "com.android.contacts", "com.android.deskclock", "com.artemis.notes",
            "com.artemis.shop"]


def center(phone: SimPhone, **attrs: str) -> tuple[int, int]:
    root = ET.fromstring(phone.hierarchy())
    want = {k.replace("_", "-"): v for k, v in attrs.items()}
    for n in root.iter("node"):
        if all(n.get(k) == v for k, v in want.items()):
            left, top, right, bottom = map(int, re.findall(r"-?\d+", n.get("bounds", "")))
            return (left + right) // 2, (top + bottom) // 2
    raise AssertionError(f"no node {attrs}")


def step(phone: SimPhone, kind: str, points: list[tuple[int, int]], phrase: str, act: object) -> LensJob:
    pre_png, pre_xml = phone.screenshot(), phone.hierarchy()
    act()  # type: ignore[operator]
    return LensJob("s", 1, pre_png, phone.screenshot(), kind, points, phrase, pre_xml, phone.hierarchy())


def test_wifi_toggle_reads_as_a_state_change() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    row = center(phone, resource_id="com.android.settings:id/network_row")
    phone.tap(*row)
    switch = center(phone, resource_id="com.android.settings:id/wifi_switch")
    job = step(phone, "tap", [switch], 'tap Switch "Wi-Fi" (id wifi_switch)', lambda: phone.tap(*switch))
    result = MechanicalLens().describe(job)
    assert (result.source, result.model) == ("mechanical", None)
    assert result.text == (
        'Screen: com.android.settings, "Network & internet" list. '
        f'Action: tap Switch "Wi-Fi" (id wifi_switch) at ({switch[0]},{switch[1]}). '
        "After: Switch (id wifi_switch) shows OFF."
    )


def test_opening_a_screen_lists_title_new_and_gone() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    row = center(phone, resource_id="com.android.settings:id/network_row")
    text = describe_step(step(phone, "tap", [row], 'tap LinearLayout "Network & internet"', lambda: phone.tap(*row)))
    assert text.startswith('Screen: com.android.settings, "Settings" list. Action: tap LinearLayout')
    assert 'After: title now "Network & internet"; new: ' in text
    assert "; gone: " in text and "(+3 more)" in text


def test_app_change_keyboard_and_no_change() -> None:
    phone = SimPhone(popups=False)
    job = step(phone, "launch_app", [], "launch_app com.artemis.notes", lambda: phone.launch("com.artemis.notes"))
    assert "app changed from com.android.launcher3 to com.artemis.notes" in describe_step(job)
    same = step(phone, "wait", [], "wait 1s", lambda: None)
    assert describe_step(same).endswith("Action: wait 1s. After: no visible change.")
    single = LensJob("s", 1, same.pre_png, None, "finish", [], "finish(success=true)", same.pre_xml, None)
    text = describe_step(single)
    assert text.endswith('Action: finish("success"=true). After: no after-capture.')
    assert verdict_words(text) == []


def test_a_dialog_is_the_screen_and_what_it_covers_is_neither_gone_nor_new() -> None:
    """Under "Set alarm" the summary names the dialog, not the Clock list behind it; opening it lists
    its own items only (the list behind is covered, not gone), and closing it lists nothing behind
    as new (it was there all along); each label is named once."""
    phone = SimPhone(popups=False)
    phone.launch("com.android.deskclock")
    fab = center(phone, resource_id="com.android.deskclock:id/fab")
    opened = describe_step(step(phone, "tap", [fab], 'tap ImageButton "Add alarm"', lambda: phone.tap(*fab)))
    assert opened.startswith('Screen: com.android.deskclock, "Clock" list. Action: tap ImageButton')
    assert 'the dialog "Set alarm" in front' in opened and "gone:" not in opened, opened
    assert '"Decrease hour"' in opened  # the dialog's own items
    new = opened.partition("new: ")[2]
    assert len(re.findall(r'"[^"]*"', new)) == len(set(re.findall(r'"[^"]*"', new)))

    pm = center(phone, resource_id="com.android.deskclock:id/pm_label")
    inside = describe_step(step(phone, "tap", [pm], 'tap RadioButton "PM"', lambda: phone.tap(*pm)))
    assert inside.startswith('Screen: com.android.deskclock, the dialog "Set alarm" in front. Action: tap'), inside
    assert '"Clock"' not in inside

    ok = center(phone, resource_id="android:id/button1")
    closed = describe_step(step(phone, "tap", [ok], 'tap Button "OK"', lambda: phone.tap(*ok)))
    assert closed.startswith('Screen: com.android.deskclock, the dialog "Set alarm" in front.'), closed
    assert 'After: the dialog "Set alarm" closed.' in closed and "new:" not in closed and "gone:" not in closed
    assert "title now" not in closed


def test_a_dialog_the_outcome_names_is_not_named_again() -> None:
    """The outcome beside the summary says the window opened: the summary keeps only the dialog's items."""
    phone = SimPhone(popups=False)
    phone.launch("com.android.deskclock")
    fab = center(phone, resource_id="com.android.deskclock:id/fab")
    job = step(phone, "tap", [fab], 'tap ImageButton "Add alarm"', lambda: phone.tap(*fab))
    observed = {"windows_opened": ['"Set alarm" (com.android.deskclock)'], "windows_closed": [],
                "text": {"appeared": [], "disappeared": []}, "states": []}
    text = describe_step(LensJob(**{**job.__dict__, "observed": observed}))
    assert "in front" not in text.partition("After:")[2] and '"Decrease hour"' in text, text


def test_unreadable_dumps_do_not_crash() -> None:
    job = LensJob("s", 1, b"not a png", b"nor this", "tap", [(1, 2)], "tap", "<<<garbage", "")
    text = describe_step(job)
    assert text.startswith("Screen: UI dump unreadable. Action: tap at (1,2).")


# --- property: every output over random sim screens is neutral, bounded, deterministic -------

WORDS = st.sampled_from([*VERDICT_WORDS, "Wi-Fi", "ok", "Payment", "order", 'say "hi"', "a\\b", "\n", "é"])
ACTIONS = st.one_of(
    st.tuples(st.just("tap"), st.integers(0, 1079), st.integers(0, 2399)),
    st.tuples(st.just("swipe"), st.integers(100, 1000), st.integers(300, 2200)),
    st.tuples(st.just("key"), st.sampled_from(["back", "home", "enter"]), st.just(0)),
    st.tuples(st.just("launch"), st.sampled_from(PACKAGES), st.just(0)),
    st.tuples(st.just("type"), st.lists(WORDS, min_size=1, max_size=3).map(" ".join), st.just(0)),
)


def act(phone: SimPhone, action: tuple[str, object, object]) -> tuple[str, list[tuple[int, int]]]:
    kind, a, b = action
    if kind == "tap":
        phone.tap(int(a), int(b))  # type: ignore[call-overload]
        return "tap", [(int(a), int(b))]  # type: ignore[call-overload]
    if kind == "swipe":
        phone.swipe(int(a), int(b), int(a), 200)  # type: ignore[call-overload]
        return "swipe", [(int(a), int(b)), (int(a), 200)]  # type: ignore[call-overload]
    if kind == "key":
        phone.key(str(a))
        return "press_key", []
    if kind == "launch":
        phone.launch(str(a))
        return "launch_app", []
    phone.type_text(str(a).replace("\n", " "))
    return "type_text", []


def tamper(xml: str, words: list[str]) -> str:
    """Put random words (verdict words included) into text and content-desc values."""
    if not words:
        return xml
    counter = iter(range(10**6))

    def swap(m: re.Match[str]) -> str:
        word = words[next(counter) % len(words)]
        value = word.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace("\n", "&#10;")
        return f'{m.group(1)}="{value}"'

    return re.sub(r'(text|content-desc)="[^"]*"', swap, xml, count=12)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.sampled_from(PACKAGES),
    actions=st.lists(ACTIONS, min_size=1, max_size=4),
    phrase_words=st.lists(WORDS, max_size=6),
    tamper_words=st.lists(WORDS, max_size=4),
)
def test_mechanical_output_is_always_neutral(
    start: str, actions: list[tuple[str, object, object]], phrase_words: list[str], tamper_words: list[str]
) -> None:
    phone = SimPhone(popups=False)
    phone.launch(start)
    png = phone.screenshot()
    for action in actions:
        pre_xml, pre_png = phone.hierarchy(), png
        kind, points = act(phone, action)
        post_xml, png = phone.hierarchy(), phone.screenshot()
        job = LensJob("s", 1, pre_png, png, kind, points, " ".join([kind, *phrase_words]),
                      tamper(pre_xml, tamper_words), tamper(post_xml, tamper_words[::-1]))
        text = describe_step(job)
        assert verdict_words(text) == [], text
        assert 15 <= len(text) <= MAX_MECHANICAL_CHARS
        assert text == describe_step(job)  # deterministic
        assert text.count('"') % 2 == text.count('\\"') % 2  # quotes stay balanced
