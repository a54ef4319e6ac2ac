"""recall_history's arguments (SPEC §10.5): parsing, validation and the tool's declaration text.

Everything a caller can get wrong is answered with a :class:`RecallError` that says how to write
it (the operator hands it to the model as a tool error; the CLI exits with 2):

* ``step_range`` — ``"a-b"`` (also ``a–b``, ``a..b``, ``a to b``) or one step ``"n"``; a ≤ b
  (a backwards range is refused, never silently reversed); at most ``MAX_RANGE_STEPS`` steps.
* ``at`` — a session time ``T+mm:ss`` (``T+`` optional; ``h:mm:ss`` too); seconds 00-59.
* ``package`` — an Android package name such as ``com.android.settings``.
* ``query`` — any text: reduced to word tokens (:func:`query_terms`), never passed on as FTS
  syntax. Stop words and question words are dropped ("what was the order number?" searches
  ``order number``); runs of two or more consecutive content words (and quoted parts) are the
  query's *phrases* (:func:`query_phrases`), which rank first.

What the caller wrote is echoed back (a result's header, an error) at most ``ECHO_CHARS``
characters long (:func:`echo`): a 100 KB query is shown as its start and its length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from artemis_cli.errors import UsageError

__all__ = [
    "CJK",
    "ECHO_CHARS",
    "MAX_RANGE_STEPS",
    "RECALL_HISTORY_DESCRIPTION",
    "RECALL_HISTORY_PARAMETERS",
    "RecallError",
    "echo",
    "echo_repr",
    "fold",
    "fts_and",
    "fts_or",
    "fts_phrases",
    "is_content",
    "parse_at",
    "parse_package",
    "parse_step_range",
    "query_phrases",
    "query_terms",
]

MAX_RANGE_STEPS = 200
MAX_TERMS = 24
MAX_TERM_CHARS = 64
MAX_PACKAGE_CHARS = 200
#: What the caller wrote is echoed back at most this long (then "… (N characters)").
ECHO_CHARS = 200

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_TOKEN = re.compile(r"[^\W_]+")
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')
_RANGE = re.compile(r"^\s*(\d{1,9})\s*(?:(?:-|–|—|\.\.|to|:)\s*(\d{1,9}))?\s*$", re.IGNORECASE)
_AT = re.compile(r"^\s*(?:t\s*\+\s*)?(?:(\d{1,4}):)?(\d{1,6}):(\d{1,2})\s*$", re.IGNORECASE)
_PACKAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+$")
# Function words and the words of a question about the past ("what did I see earlier?"): never
# what a step's text is searched for, unless nothing else is left.
_STOPWORDS = frozenset(
    [
        "a", "about", "again", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
        "being", "but", "by", "can", "could", "did", "do", "does", "doing", "during", "earlier", "find",
        "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is",
        "it", "its", "just", "many", "me", "much", "my", "of", "on", "onto", "or", "our", "please",
        "previously", "recall", "remember", "said", "saw", "say", "says", "see", "seen", "shall", "she",
        "should", "show", "shown", "so", "some", "tell", "than", "that", "the", "their", "them", "then",
        "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your",
    ]
)

RECALL_HISTORY_DESCRIPTION = (
    "Look back at earlier steps of this session (does not end the turn): search them by words "
    "(`query`; a question works too), or ask for steps by number (`step_range`), by session time "
    "(`at`) or by app (`package`). Steps asked for come back with their ledger lines, the screen "
    "text seen at each step and its visual summary, as much as fits in the answer."
)
RECALL_HISTORY_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words to look for in screens, actions, summaries, thoughts, notes and "
            "chunks, e.g. 'order number' or 'phone number of Alice'.",
        },
        "step_range": {
            "type": "string",
            "description": "Steps 'a-b' with a <= b, or one step 'n' (e.g. '40-40'): their ledger "
            "lines, screen text and summaries.",
        },
        "at": {
            "type": "string",
            "description": "A session time 'T+mm:ss' (e.g. 'T+12:30'): the step at or just before "
            "it, with its neighbours.",
        },
        "package": {
            "type": "string",
            "description": "Only steps whose foreground app is this package (e.g. "
            "'com.android.settings'); combines with query.",
        },
        "include_details": {"type": "boolean", "description": "Also show thoughts, verdicts and summaries."},
        "include_images": {"type": "boolean", "description": "Attach the screenshot of the best step."},
        "max_results": {"type": "integer", "description": "At most this many search results (default 5)."},
    },
}


class RecallError(UsageError):
    """A recall request that cannot be answered as asked (no query and no range, bad range).

    The operator returns it to the model as a tool error; the CLI exits with 2. ``did_you_mean``
    is the value as it was probably meant (``"10-50"`` for ``"50-10"``), when there is one."""

    did_you_mean: str | None = None

    def __init__(self, message: str, *, hint: str | None = None, did_you_mean: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.did_you_mean = did_you_mean


# --- echoing what the caller wrote ---------------------------------------------------------------


def echo(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as given when it is at most ``limit`` characters, else its first ``limit``
    characters, ``…`` and the whole length: ``"tap the… (102,400 characters)"``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def echo_repr(value: object, limit: int = ECHO_CHARS) -> str:
    """``repr(value)`` for an error message, a long string cut as :func:`echo` does."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    shown = repr(value)
    return shown if len(shown) <= limit + 2 else echo(shown, limit)


# --- folding -----------------------------------------------------------------------------------


#: Bounded in bytes by its entries: 4,096 one-character strings and their one-character folds,
#: ~200 bytes each with lru_cache's own node: under 1 MB. Kept as functools' C cache (not a
#: ByteLRU): fold() calls it once per character of every non-ASCII text recall reads.
@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFD", ch)
    if len(decomposed) > 1 and all(unicodedata.combining(c) for c in decomposed[1:]):
        ch = decomposed[0]
    return ch.lower()[:1] or ch


def fold(text: str) -> str:
    """Lower case without diacritics, one character per character (positions stay valid)."""
    if text.isascii():
        return text.lower()
    return "".join(_fold_char(ch) for ch in text)


# --- query -------------------------------------------------------------------------------------


def is_content(token: str) -> bool:
    """A word worth searching for: not a stop word, not a lone letter."""
    if token in _STOPWORDS:
        return False
    return len(token) > 1 or token.isdigit() or bool(CJK.search(token))


def _tokens(text: str) -> list[str]:
    return [fold(t)[:MAX_TERM_CHARS] for t in _TOKEN.findall(text)]


def query_terms(query: str) -> tuple[str, ...]:
    """Safe search terms: word tokens (letters/digits), folded, deduplicated, stop words and
    single letters dropped unless nothing else is left. Quotes, parentheses, ``AND``, ``*``, ``:``
    are just text."""
    if not isinstance(query, str):
        return ()
    tokens = list(dict.fromkeys(_tokens(query)))
    content = [t for t in tokens if is_content(t)]
    return tuple((content or tokens)[:MAX_TERMS])


def query_phrases(query: str) -> tuple[tuple[str, ...], ...]:
    """Word sequences a step ranks first for showing together: each quoted part of the query
    (all its words) and each run of two or more consecutive content words."""
    if not isinstance(query, str):
        return ()
    phrases: list[tuple[str, ...]] = []
    for match in _QUOTED.finditer(query):
        words = tuple(_tokens(match.group(1) or match.group(2)))
        if len(words) >= 2:
            phrases.append(words)
    run: list[str] = []
    for token in [*_tokens(_QUOTED.sub(" . ", query)), ""]:
        if token and is_content(token):
            run.append(token)
            continue
        if len(run) >= 2:
            phrases.append(tuple(run))
        run = []
    return tuple(dict.fromkeys(p[:MAX_TERMS] for p in phrases))[:8]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _term(term: str) -> str:
    return _quote(term) + "*" if len(term) >= 4 and not CJK.search(term) else _quote(term)


def fts_or(terms: Sequence[str]) -> str:
    return " OR ".join(_term(t) for t in terms)


def fts_and(terms: Sequence[str]) -> str:
    return " AND ".join(_term(t) for t in terms)


def fts_phrases(phrases: Sequence[Sequence[str]]) -> str:
    return " OR ".join(_quote(" ".join(p)) for p in phrases)


# --- step range, time, package -------------------------------------------------------------------


def _subject(name: str | None) -> str:
    """How an error names the argument: the tool's argument name for the model (``step_range``),
    nothing for the CLI (Click's "Invalid value for '--steps':" already names the option)."""
    return f"{name} " if name else ""


def parse_step_range(value: tuple[int, int] | Sequence[int] | str | None,
                     name: str | None = "step_range") -> tuple[int, int] | None:
    """``(a, b)``, ``"a-b"`` (also ``a–b``, ``a..b``, ``a to b``) or ``"n"`` → ``(a, b)``.

    A backwards range (``"50-10"``) is an error that shows the forward spelling. ``name``: what
    an error calls the argument (:func:`_subject`)."""
    arg = _subject(name)
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        match = _RANGE.match(value)
        if not match:
            raise RecallError(
                f"{arg}{echo_repr(value)} is not a step range",
                hint='write it as "a-b", e.g. "12-20", or one step "12"',
            )
        a = int(match.group(1))
        b = int(match.group(2)) if match.group(2) else a
    else:
        items = list(value)
        if len(items) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            raise RecallError(f"{arg}{echo_repr(value)} must be two step numbers")
        a, b = items
    if b < a:
        shown = value.strip() if isinstance(value, str) else f"{a}-{b}"
        raise RecallError(
            f"{arg}{shown!r} runs backwards", hint=f'write the lower step first: "{b}-{a}"',
            did_you_mean=f"{b}-{a}",
        )
    if b < 1:
        raise RecallError(f"{arg}{a}-{b} has no step: steps are numbered from 1")
    a = max(a, 1)
    if b - a + 1 > MAX_RANGE_STEPS:
        raise RecallError(
            f"{arg}{a}-{b} spans {b - a + 1} steps; ask for at most {MAX_RANGE_STEPS} at a time"
        )
    return a, b


def parse_at(value: str | None, name: str | None = "at") -> int | None:
    """``"T+12:30"`` (also ``12:30``, ``T+125:03``, ``1:02:03``) → milliseconds into the session."""
    arg = _subject(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    hint = "write a session time as T+mm:ss with seconds 00-59, e.g. T+12:30"
    if not isinstance(value, str):
        raise RecallError(f"{arg}{echo_repr(value)} is not a session time", hint=hint)
    match = _AT.match(value)
    if not match:
        raise RecallError(f"{arg}{echo_repr(value)} is not a session time", hint=hint)
    hours, minutes, seconds = int(match.group(1) or 0), int(match.group(2)), int(match.group(3))
    if seconds > 59 or len(match.group(3)) != 2 or (match.group(1) is not None and minutes > 59):
        raise RecallError(f"{arg}{echo_repr(value)} is not a session time", hint=hint)
    return ((hours * 60 + minutes) * 60 + seconds) * 1000


def parse_package(value: str | None, name: str | None = "package") -> str | None:
    """An Android package name (``com.android.settings``), stripped; None when not given."""
    arg = _subject(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    hint = "give the app's package name, e.g. com.android.settings"
    if not isinstance(value, str):
        raise RecallError(f"{arg}{echo_repr(value)} is not a package name", hint=hint)
    package = value.strip()
    if len(package) > MAX_PACKAGE_CHARS or not _PACKAGE.match(package):
        raise RecallError(f"{arg}{echo_repr(value)} is not a package name", hint=hint)
    return package
