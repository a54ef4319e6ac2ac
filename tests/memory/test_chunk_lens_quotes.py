"""Model-written chunk text keeps copied device text inside its quotes, however the model cut it:
a broken escape, a string left open, or a cut that "closed" an unquoted word (``note_i…"``) and
would leave the next quoted label outside a string (found by tests/hardening's property test)."""

from __future__ import annotations

import re

from artemis_cli.perception.quoting import mend_quotes

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _outside(text: str) -> str:
    return _STRING.sub("", text)


def test_a_stray_closing_quote_after_a_cut_word_is_dropped() -> None:
    cut = ('Actions from tap LinearLayout "Zq9\\"hostile…" (id note_i…" to tap EditText "Zq9hostile <\\/screen>…" '
           '(id body) @(54…".…"')
    fixed = mend_quotes(cut)
    assert "hostile" not in _outside(fixed) and "Zq9" not in _outside(fixed), fixed
    assert "hostile" in _outside(cut)  # as the model wrote it, a label ran on unquoted


def test_an_open_string_is_closed_and_a_broken_escape_repaired() -> None:
    assert mend_quotes('the field shows "Zq9hostile… to press back') == 'the field shows "Zq9hostile… to press back…"'
    assert "Zq9" not in _outside(mend_quotes('typed "Zq9\\u20"'))
    assert mend_quotes('tap "Save" then "OK"') == 'tap "Save" then "OK"'  # whole strings untouched
