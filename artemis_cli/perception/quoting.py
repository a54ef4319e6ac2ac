"""Device text in prompts and ledgers: quoted so it can neither end its quotes, start a line of
its own, nor close the prompt's ``<screen>`` fence (SPEC §9: screen text is untrusted data)."""

from __future__ import annotations

import json

__all__ = ["MAX_QUOTED_CHARS", "MAX_SCREEN_TEXT_CHARS", "one_token", "quote_untrusted"]

#: Device text in history lines (ledger lines, recall, phrases): short, these stay for long.
MAX_QUOTED_CHARS = 80
#: Device text in the current observation's element list: kept whole; the cap only guards
#: against pathological text (a dump with a megabyte label).
MAX_SCREEN_TEXT_CHARS = 2000
_RAW_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def quote_untrusted(text: str, limit: int | None = MAX_QUOTED_CHARS) -> str:
    """JSON string of ``text`` cut to ``limit`` characters plus "…" (``None``: never cut).

    ``</`` is written ``<\\/`` (the same JSON string) and the line breaks JSON leaves raw
    (U+0085, U+2028, U+2029) are escaped, so the result is always one line."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    out = json.dumps(text, ensure_ascii=False).replace("</", "<\\/")
    for raw, escaped in _RAW_LINE_BREAKS.items():
        out = out.replace(raw, escaped)
    return out


def one_token(text: str) -> str:
    """``text`` with whitespace and unprintable characters as ``_``: one line, one word."""
    return "".join(ch if ch.isprintable() and not ch.isspace() else "_" for ch in text)
