"""escape_input_text / plan_text_input, checked against a reference model of the device side."""

from __future__ import annotations

import base64
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artemis_cli.device.text_input import (
    KEYCODE_ENTER,
    KEYCODE_TAB,
    PressKey,
    TypeChunk,
    adb_keyboard_broadcast,
    escape_input_text,
    needs_ime,
    plan_text_input,
    split_lines_for_ime,
)

# --- reference model of the device ----------------------------------------------------------


def android_send_text(arg: str) -> str:
    """Port of InputShellCommand.sendText's unescaping: '%' then 's' -> ' ' (the '%' dropped)."""
    buff = list(arg)
    escape = False
    i = 0
    while i < len(buff):
        if escape:
            escape = False
            if buff[i] == "s":
                buff[i] = " "
                i -= 1
                del buff[i]
        if buff[i] == "%":
            escape = True
        i += 1
    return "".join(buff)


def device_runs(command: str) -> tuple[str, str]:
    """What the device shell (POSIX quoting, like mksh) hands to `input`: (verb, typed text)."""
    argv = shlex.split(command, posix=True)
    assert argv[0] == "input", command
    if argv[1] == "text":
        assert len(argv) == 3, f"must be exactly one argument: {argv}"
        typed = android_send_text(argv[2])
        assert all(" " <= c <= "~" for c in typed)
        return "text", typed
    assert argv[1] == "keyevent" and len(argv) == 3
    return "key", {str(KEYCODE_ENTER): "\n", str(KEYCODE_TAB): "\t"}[argv[2]]


def typed_on_device(text: str) -> str:
    return "".join(device_runs(step.command())[1] for step in plan_text_input(text))


def test_reference_model_matches_documented_behaviour() -> None:
    assert android_send_text("a%sb") == "a b"
    assert android_send_text("100%") == "100%"
    assert android_send_text("%d%") == "%d%"
    assert android_send_text("%%s") == "% "  # no escape for a literal %s exists


# --- escape_input_text ------------------------------------------------------------------------


def test_space_becomes_percent_s_and_metacharacters_are_quoted() -> None:
    assert escape_input_text("hello world") == "hello%sworld"  # safe chars stay bare
    for meta in "\\'\"()&<>;|*~$`!?#[]{}":
        arg = escape_input_text(f"a{meta}b")
        assert shlex.split(arg) == [f"a{meta}b"], meta


def test_single_quote_is_closed_escaped_and_reopened() -> None:
    arg = escape_input_text("it's")
    assert shlex.split("input text " + arg) == ["input", "text", "it's"]


@pytest.mark.parametrize("bad", ["", "50%sale", "é", "a\nb", "\x07"])
def test_escape_rejects_what_one_input_text_call_cannot_type(bad: str) -> None:
    with pytest.raises(ValueError):
        escape_input_text(bad)


# --- plan_text_input ----------------------------------------------------------------------------


def test_literal_percent_s_is_split_across_two_calls() -> None:
    plan = plan_text_input("50%sale")
    assert plan == [TypeChunk("50%"), TypeChunk("sale")]
    assert typed_on_device("50%sale") == "50%sale"


def test_newline_and_tab_are_key_presses() -> None:
    plan = plan_text_input("a\r\nb\tc\nd\re")
    assert plan == [
        TypeChunk("a"), PressKey(KEYCODE_ENTER), TypeChunk("b"), PressKey(KEYCODE_TAB),
        TypeChunk("c"), PressKey(KEYCODE_ENTER), TypeChunk("d"), PressKey(KEYCODE_ENTER),
        TypeChunk("e"),
    ]


def test_non_ascii_is_refused_not_garbled() -> None:
    assert needs_ime("Привет") and needs_ime("café") and needs_ime("a\x00")
    assert not needs_ime("plain ASCII: ~!@#$%^&*()_+{}|:\"<>?\n\t")
    with pytest.raises(ValueError, match="U\\+00E9"):
        plan_text_input("café")


@pytest.mark.parametrize(
    "text",
    ["%s", "%%s", "% s", "%", "s%", "%%%s%s", "a b  c", " ", "'\"'", "$(reboot)", "`id`; rm -rf /",
     "*", "~/x", "#not a comment", "a\\nb", "-5", "--help", "%s%s%s"],
)
def test_tricky_texts_round_trip(text: str) -> None:
    assert typed_on_device(text) == text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60))
def test_any_printable_ascii_round_trips(text: str) -> None:
    assert typed_on_device(text) == text


@given(st.text(alphabet=st.sampled_from(list("%s \n\t'\"\\ab")), max_size=40))
def test_dense_percent_and_escape_mixes_round_trip(text: str) -> None:
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    assert typed_on_device(text) == expected


# --- IME helpers ------------------------------------------------------------------------------


def test_adb_keyboard_broadcast_carries_utf8_base64() -> None:
    argv = shlex.split(adb_keyboard_broadcast("你好 'x' $HOME"))
    assert argv[:6] == ["am", "broadcast", "-a", "ADB_KEYBOARD_INPUT_TEXT", "--es", "text"]
    assert base64.b64decode(argv[6]).decode() == "你好 'x' $HOME"


def test_split_lines_for_ime() -> None:
    assert split_lines_for_ime("你好\n世界\r\n") == ["你好", None, "世界", None]
    assert split_lines_for_ime("") == []
