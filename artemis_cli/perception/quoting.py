"""Device text in prompts, ledgers and tool answers: quoted so it can neither end its quotes,
start a line of its own, nor open or close a prompt's ``<screen>`` fence (SPEC §9: screen text is
untrusted data).

This is the one place untrusted text is quoted: :func:`quote_untrusted` for one string,
:func:`untrusted_json` for a JSON answer that carries device text. Both write JSON, so the text
decodes back exactly; on top of JSON's own escapes

* ``</`` is written ``<\\/`` and ``<screen`` (any case) ``\\u003cscreen``: no fence tag survives;
* the line breaks JSON leaves raw (U+0085, U+2028, U+2029) are escaped, so the result is one line
  whatever ``str.splitlines`` or a model's tokenizer counts as a line break;
* lone surrogates (``"\\ud800"``, text no UTF-8 encoder takes) are escaped, so the result can be
  written to any UTF-8 wire, file or database.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "MAX_QUOTED_CHARS",
    "MAX_SCREEN_TEXT_CHARS",
    "close_quotes",
    "fence_safe",
    "mend_quotes",
    "one_token",
    "quote_untrusted",
    "repair_escapes",
    "untrusted_json",
]

#: Device text in history lines (ledger lines, recall, phrases): short, these stay for long.
MAX_QUOTED_CHARS = 80
#: Device text in the current observation's element list: kept whole; the cap only guards
#: against pathological text (a dump with a megabyte label).
MAX_SCREEN_TEXT_CHARS = 2000
_FENCE_TAG = r"</|<(?=[sS][cC][rR][eE][eE][nN])"
_FENCE = re.compile(_FENCE_TAG)
_UNSAFE = re.compile(_FENCE_TAG + r"|[\u0085\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    text = match.group()
    if text == "</":
        return "<\\/"
    return f"\\u{ord(text):04x}"


def untrusted_json(data: Any, indent: int | None = None, *, sort_keys: bool = False) -> str:
    """``data`` as JSON (``ensure_ascii=False``) with the escapes above: however it is indented,
    no device text inside it starts a line or opens or closes a fence."""
    return _UNSAFE.sub(_escape, json.dumps(data, ensure_ascii=False, indent=indent, sort_keys=sort_keys))


def fence_safe(text: str) -> str:
    """``text`` with the fence tags escaped as :func:`untrusted_json` escapes them: what goes
    inside a ``<screen>`` fence (device text there is quoted already; this is the backstop)."""
    return _FENCE.sub(_escape, text)


def quote_untrusted(text: str, limit: int | None = MAX_QUOTED_CHARS) -> str:
    """``text`` as one JSON string on one line (escaped as :func:`untrusted_json` says), cut to
    ``limit`` characters plus "…" (``None``: never cut)."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return untrusted_json(text)


def close_quotes(text: str) -> str:
    """``text`` (a line of quoted strings cut short) with a quoted string the cut went into
    closed again (``…"``), leaving out an escape sequence the cut split: however a line holding
    quoted device text is cut, the text never runs on unquoted."""
    in_string, i = False, 0
    while i < len(text):
        if in_string and text[i] == "\\":
            size = 6 if text[i + 1 : i + 2] == "u" else 2
            if i + size > len(text):
                return text[:i] + '…"'
            i += size
            continue
        if text[i] == '"':
            in_string = not in_string
        i += 1
    return text + '…"' if in_string else text


def one_token(text: str) -> str:
    """``text`` with whitespace and unprintable characters as ``_``: one line, one word."""
    return "".join(ch if ch.isprintable() and not ch.isspace() else "_" for ch in text)


_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])?')


def repair_escapes(text: str) -> str:
    """Model-written text that copies quoted device text may break an escape (``"…\\u0…"``, cut
    mid-way): each backslash that starts no valid JSON escape is doubled, so every quoted span
    it wrote still reads as one JSON string."""
    return _ESCAPE.sub(lambda m: m.group(0) if m.group(1) else "\\\\", text)


def mend_quotes(text: str) -> str:
    """Model-written text that copies quoted device text, with each quoted span whole: broken
    escapes repaired, a closing quote where no string is open dropped (a cut that "closed" an
    unquoted word, ``note_i…"``: it would open a string and leave the next quoted label outside
    one), a string the model left open closed at the end of its line."""
    return "\n".join(close_quotes(_without_stray_closes(line)) for line in repair_escapes(text).split("\n"))


def _without_stray_closes(line: str) -> str:
    out: list[str] = []
    in_string, i = False, 0
    while i < len(line):
        ch = line[i]
        if in_string and ch == "\\":
            out.append(line[i:i + 2])
            i += 2
            continue
        if ch == '"':
            if not in_string and out and out[-1].endswith("…"):
                i += 1  # a cut's closing quote after an unquoted word: not a string
                continue
            in_string = not in_string
        out.append(ch)
        i += 1
    return "".join(out)
