"""recall's argument parsing and text handling (SPEC §10.5): stop words, phrases, times, ranges,
value-safe cutting and snippets, and a step's screen text from a real (simulated) UI dump."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artemis_cli.memory.recall_args import (
    RecallError,
    parse_at,
    parse_package,
    parse_step_range,
    query_phrases,
    query_terms,
)
from artemis_cli.memory.recall_text import Matcher, label_snippet, safe_cut, screen_text, snippet, window
from artemis_cli.sim.phone import SimPhone

VALUES = ["$12.99", "#A-10432", "+1 555-0102", "ART-10001", '"Device name"', "9:00 PM", "ben.brooks@example.com",
          "AP1A.240305.019", "(555) 010-2000", "€ 7,50"]
WORDS = st.sampled_from(["the", "order", "was", "placed", "and", "total", "is", "shown", "below", "Lorem", "ipsum",
                         "x", "a-b", "42"])


# --- query ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "terms"), [
    ("what was the order number?", ("order", "number")),
    ("phone number of Alice", ("phone", "number", "alice")),
    ("What is Ben Brooks's email address?", ("ben", "brooks", "email", "address")),
    ("how much did the desk lamp cost", ("desk", "lamp", "cost")),
    ("when did I see the Wi-Fi password earlier", ("wi", "fi", "password")),
    ("Café CRÈME", ("cafe", "creme")),
    ("what was it", ("what", "was", "it")),  # nothing but stop words: keep them all
    ("+1 555-0102", ("1", "555", "0102")),
])
def test_query_terms_drop_question_and_stop_words(query: str, terms: tuple[str, ...]) -> None:
    assert query_terms(query) == terms


def test_query_phrases_are_runs_of_content_words_and_quoted_parts() -> None:
    assert query_phrases("what is the device name?") == (("device", "name"),)
    assert query_phrases("phone number of Alice") == (("phone", "number"),)
    assert query_phrases('"the field shows" now') == (("the", "field", "shows"),)
    assert query_phrases("zanzibar") == ()
    assert Matcher(query_terms("how much did the desk lamp cost"),
                   query_phrases("how much did the desk lamp cost")).pairs == [("desk", "lamp"), ("lamp", "cost")]


# --- step range, time, package -------------------------------------------------------------------


def test_backwards_step_range_is_refused_with_the_forward_spelling() -> None:
    assert parse_step_range("10-14") == (10, 14) == parse_step_range((10, 14))
    assert parse_step_range("40") == (40, 40)
    for bad in ("50-10", (50, 10), "50 to 10", "50..10"):
        with pytest.raises(RecallError, match="runs backwards") as info:
            parse_step_range(bad)
        assert info.value.hint == 'write the lower step first: "10-50"' and info.value.exit_code == 2


@pytest.mark.parametrize(("value", "ms"), [
    ("T+12:30", 750_000), ("t+12:30", 750_000), ("12:30", 750_000), (" T+ 0:05 ", 5_000), ("T+125:03", 7_503_000),
    ("1:02:03", 3_723_000), ("T+00:00", 0), (None, None), ("  ", None),
])
def test_parse_at(value: str | None, ms: int | None) -> None:
    assert parse_at(value) == ms


@pytest.mark.parametrize("value", ["12:99", "12:5", "1:60:00", "abc", "12", "T-12:30", "12:30:", "T+12:30pm"])
def test_malformed_at_is_a_clear_usage_error(value: str) -> None:
    with pytest.raises(RecallError, match="is not a session time") as info:
        parse_at(value)
    assert "T+mm:ss" in (info.value.hint or "")


def test_parse_package() -> None:
    assert parse_package(" com.android.settings ") == "com.android.settings"
    assert parse_package(None) is None
    for bad in ("settings", "com android", "com..x", "1com.x", "x" * 300 + ".y"):
        with pytest.raises(RecallError, match="is not a package name"):
            parse_package(bad)


# --- cutting keeps values whole ------------------------------------------------------------------


def _bounds(text: str, piece: str) -> tuple[int, int]:
    core = piece.removeprefix("…").removesuffix("…")
    start = text.find(core)
    assert start >= 0, (text, piece)
    return start, start + len(core)


@given(st.lists(WORDS, max_size=40), st.sampled_from(VALUES), st.lists(WORDS, max_size=40), st.integers(1, 120))
def test_safe_cut_never_cuts_inside_a_value(before: list[str], value: str, after: list[str], limit: int) -> None:
    text = " ".join([*before, value, *after])
    start = text.index(value)
    cut = safe_cut(text, limit)
    _, end = _bounds(text, cut)
    assert end <= start or end >= start + len(value), (cut, value)
    assert len(cut) <= max(limit, len(text.split(" ")[0])) + 1


@given(st.lists(WORDS, max_size=80), st.sampled_from(VALUES), st.lists(WORDS, max_size=80), st.integers(20, 200))
def test_a_window_around_a_value_shows_it_whole(before: list[str], value: str, after: list[str], cap: int) -> None:
    text = " ".join([*before, value, *after])
    start = text.index(value)
    piece = window(text, start, start + len(value), cap)
    assert value in piece
    lo, hi = _bounds(text, piece)
    assert (lo == 0 or text[lo - 1] == " ") and (hi == len(text) or text[hi] == " "), piece  # whole words only
    for other in VALUES:  # no other value is cut in half at the edges either
        for pos in range(len(text)):
            if text.startswith(other, pos):
                assert not (pos < lo < pos + len(other)) and not (pos < hi < pos + len(other))


def test_snippet_shows_the_whole_sentence_with_a_value_far_from_the_match() -> None:
    # 16 tokens of snippet (the old cut) would have stopped long before the order number
    thought = ("The confirmation page says that the order was placed successfully and that the shop will send "
               "an email, and the order number shown under the heading is #A-10432 for a total of $12.99.")
    text = snippet(thought, Matcher(query_terms("order placed")))
    assert "#A-10432" in text and "$12.99" in text


def test_snippet_of_element_labels_keeps_each_label_whole_with_its_neighbours() -> None:
    labels = " | ".join(["About phone", "Device name · Artemis Sim", "Model", "Artemis Sim", "Android version", "14",
                         "Build number", "AP1A.240305.019", *[f"Filler row {i} with some words" for i in range(30)]])
    text = label_snippet(labels.split(" | "), Matcher(query_terms("what is the build number?"),
                                                      query_phrases("build number")))
    # each label quoted on its own (device text), the cap counting the labels
    assert '"Build number" | "AP1A.240305.019"' in text and text.endswith("…") and len(text) <= 400
    clock = " | ".join(["Clock", "Alarm", "7:30 AM", "Wake up", "ON", "7:30 AM alarm", "Delete", "Delete alarm",
                        "9:00 PM", "Bedtime", "OFF", "9:00 PM alarm", "Add alarm", *["Pad"] * 80])
    text = label_snippet(clock.split(" | "), Matcher(query_terms("when does the bedtime alarm ring")), 60)
    assert '"9:00 PM" | "Bedtime"' in text  # a term not shown yet (bedtime) wins a place, with its neighbour


# --- screen text --------------------------------------------------------------------------------


def test_screen_text_leaves_out_system_bars_and_keyboard_and_password_text() -> None:
    phone = SimPhone(popups=False)
    phone.launch("com.artemis.shop")
    phone.tap(540, 680)  # the username field: the keyboard comes up
    phone.type_text("demo")
    before = screen_text(phone.hierarchy())
    assert before.problem is None and before.keyboard
    labels = before.labels()
    assert "Log in" in labels and "demo" in labels
    assert not {"Back", "Home", "Overview", "Wi-Fi", "q", "Shift"} & set(labels)  # bars and keys are noise
    phone.key("enter")  # into the password field
    phone.type_text("artemis123")
    after = screen_text(phone.hierarchy())
    assert after.lines() == ['TextView "Shop"', 'TextView "Welcome back"', 'TextView "Log in to continue shopping"',
                             'EditText "demo"', 'EditText "Password" {password}', 'Button "Log in"']  # hint, not dots


def test_screen_text_of_garbage_is_a_problem_not_an_error() -> None:
    assert screen_text(b"<not xml").problem is not None
    assert screen_text(None).problem == "no UI dump was recorded"
