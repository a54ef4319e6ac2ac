"""Turning user text into `input text` / `input keyevent` commands that type it faithfully.

How Android's ``input text ARG`` treats its argument (``InputShellCommand.sendText``, formerly
``com.android.commands.input.Input.sendText``): it scans the string once; every ``s`` that
directly follows a ``%`` becomes a space and the ``%`` is dropped.  Nothing else is special: no
other escape exists, so a literal ``%s`` can never be typed by one call.  The remaining characters
are mapped to key events through the virtual keyboard's key character map, which covers printable
ASCII only (anything else makes the command fail or type nothing).

So, to type ``text``:

* printable ASCII goes through ``input text``; a space is written ``%s`` (Android 4.x's ``input``
  wrapper re-split its arguments on spaces, and ``%s`` is the form every version accepts);
* wherever the user's text has ``%`` directly followed by ``s``, the text is split into two
  ``input text`` calls after the ``%`` (``"50%sale"`` -> ``input text '50%'`` then
  ``input text 'sale'``), so no ``%s`` is ever formed from user characters;
* every argument is single-quoted for the device shell (mksh/toybox ``sh -c``): inside single
  quotes ``\\ " ( ) & < > ; | * ~ $ ` ! ? # [ ] { }`` are all literal; a ``'`` is written
  ``'\\''``;
* newline (``\\n``, ``\\r\\n`` or ``\\r``) presses Enter (KEYCODE_ENTER) and tab presses Tab
  (KEYCODE_TAB) - ``input text`` cannot type them;
* any other character (non-ASCII, other control characters) cannot be typed this way: callers
  must use an IME (see :class:`artemis_cli.device.adb.AdbDevice`) or refuse.

Limits: very old ``input`` wrappers (Android <= 4.3, which used an unquoted ``$*``) re-split and
glob-expand their arguments on the device; quoting cannot protect against that.
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass
from typing import Literal

from artemis_cli.device.protocol import KEYCODES

KEYCODE_ENTER = KEYCODES["enter"]
KEYCODE_TAB = KEYCODES["tab"]

#: uiautomator2's input method (bundled in its app-uiautomator.apk) and the broadcast it handles.
ADB_KEYBOARD_IME = "com.github.uiautomator/.AdbKeyboard"
ADB_KEYBOARD_INPUT_TEXT = "ADB_KEYBOARD_INPUT_TEXT"


def is_input_text_char(ch: str) -> bool:
    """True when ``input text`` can type ``ch`` (printable ASCII, space included)."""
    return " " <= ch <= "~"


def needs_ime(text: str) -> bool:
    """True when some character is neither printable ASCII nor a newline/tab we press as a key."""
    return any(not (is_input_text_char(ch) or ch in "\r\n\t") for ch in text)


def escape_input_text(text: str) -> str:
    """The device-shell argument that makes ``input text`` type exactly ``text``.

    ``text`` must be one segment: printable ASCII without a ``%`` directly followed by ``s``
    (use :func:`plan_text_input` to split arbitrary text).  Raises ``ValueError`` otherwise.
    """
    if not text:
        raise ValueError("input text cannot type an empty string")
    bad = [ch for ch in text if not is_input_text_char(ch)]
    if bad:
        raise ValueError(f"input text can only type printable ASCII, got {bad[0]!r}")
    if "%s" in text:
        raise ValueError("a literal '%s' must be split across two input text calls (plan_text_input)")
    return shlex.quote(text.replace(" ", "%s"))


@dataclass(frozen=True)
class TypeChunk:
    """Type ``text`` (printable ASCII, no '%s') with one ``input text`` call."""

    text: str
    kind: Literal["text"] = "text"

    def command(self) -> str:
        return f"input text {escape_input_text(self.text)}"


@dataclass(frozen=True)
class PressKey:
    """Press one key (``input keyevent N``)."""

    keycode: int
    kind: Literal["key"] = "key"

    def command(self) -> str:
        return f"input keyevent {self.keycode}"


InputStep = TypeChunk | PressKey


def plan_text_input(text: str) -> list[InputStep]:
    """Split ``text`` into ``input text`` chunks and key presses that type it exactly.

    Raises ``ValueError`` when a character cannot be typed without an IME (see :func:`needs_ime`).
    """
    steps: list[InputStep] = []
    buf: list[str] = []

    def flush() -> None:
        if buf:
            steps.append(TypeChunk("".join(buf)))
            buf.clear()

    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\r" or ch == "\n":
            flush()
            steps.append(PressKey(KEYCODE_ENTER))
            i += 2 if text.startswith("\r\n", i) else 1
            continue
        if ch == "\t":
            flush()
            steps.append(PressKey(KEYCODE_TAB))
        elif is_input_text_char(ch):
            if ch == "s" and buf and buf[-1] == "%":
                flush()  # end the chunk after '%' so no '%s' is formed
            buf.append(ch)
        else:
            raise ValueError(f"character {ch!r} (U+{ord(ch):04X}) cannot be typed with input text")
        i += 1
    flush()
    return steps


def split_lines_for_ime(text: str) -> list[str | None]:
    """Split text for the IME path: strings are committed as text, ``None`` means press Enter."""
    out: list[str | None] = []
    for n, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n")):
        if n:
            out.append(None)
        if line:
            out.append(line)
    return out


def adb_keyboard_broadcast(text: str) -> str:
    """The shell command that makes uiautomator2's AdbKeyboard commit ``text`` (any Unicode).

    Same broadcast uiautomator2 itself sends: action ADB_KEYBOARD_INPUT_TEXT with the UTF-8 text
    base64-encoded in the string extra ``text`` (base64 is shell-safe).
    """
    b64 = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"am broadcast -a {ADB_KEYBOARD_INPUT_TEXT} --es text {b64}"
