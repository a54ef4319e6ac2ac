"""Text for recall (SPEC §10.5): a step's screen text, value-safe cutting, and snippets.

* **Screen text** (:func:`screen_text`): the elements of a step's recorded UI dump, as the element
  list shows them, without the system bars and the keyboard (noise on every step: the clock, the
  battery, ``q w e r t y``); a shown keyboard is one mark. Password fields never show their text.
* **Cutting** (:func:`safe_cut`, :func:`window`): text is only cut between *atoms* — whitespace
  separated tokens, with values that contain spaces kept as one atom (quoted labels, phone
  numbers such as ``+1 555-0102``, times such as ``9:00 PM``) — so ``$12.99``, ``#A-10432`` or
  ``ART-10001`` are whole or absent, never half shown.
* **Snippets** (:func:`snippet`): the segment (element label, line or sentence) that matches the
  query best — a phrase first, then the most terms — with its neighbours, up to a cap.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from artemis_cli.errors import ArtemisError
from artemis_cli.memory.recall_args import CJK, fold, is_content
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.types import Element, UITree

__all__ = [
    "Matcher",
    "ScreenText",
    "flat",
    "index_text_from_xml",
    "label_snippet",
    "safe_cut",
    "screen_text",
    "screen_text_of",
    "snippet",
    "ui_text_from_xml",
    "window",
]

SNIPPET_CHARS = 300  # a snippet shows at most about this much (a longer value stays whole)
MAX_LABEL_CHARS = 300  # one element's label in a step's screen text
_SLACK = 40  # a cut moves at most this far out to keep a value whole
_MAX_VALUE_CHARS = 80  # a longer unbroken token is a blob, not a value: it may be cut
_STATE_FLAGS = ("checked", "unchecked", "selected", "disabled", "password")

_WS = re.compile(r"\s+")
_ATOM_VALUES = re.compile(
    r'"[^"\n]{0,200}"'  # a quoted label
    r"|“[^”\n]{0,200}”"
    r"|\+?\(?\d[\d ().\-]{4,}\d"  # phone numbers, digit groups
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\s?(?:[AaPp]\.?[Mm]\.?)"  # 9:00 PM
    r"|[$€£¥]\s\d[\d.,]*"  # "$ 12.99"
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)|\n+")


def flat(text: str) -> str:
    """Whitespace collapsed: one line."""
    return _WS.sub(" ", text).strip()


# --- atoms and cutting ---------------------------------------------------------------------------


def _atoms(text: str) -> list[tuple[int, int]]:
    """Spans that are never cut: tokens, merged with the value spans that overlap them."""
    spans = sorted([m.span() for m in re.finditer(r"\S+", text)] + [m.span() for m in _ATOM_VALUES.finditer(text)])
    atoms: list[tuple[int, int]] = []
    for start, end in spans:
        if atoms and start < atoms[-1][1]:
            atoms[-1] = (atoms[-1][0], max(atoms[-1][1], end))
        else:
            atoms.append((start, end))
    return atoms


def window(text: str, start: int, end: int, cap: int = SNIPPET_CHARS) -> str:
    """About ``cap`` characters of ``text`` around ``[start, end)`` (kept whole), cut only between
    atoms; "…" marks a cut."""
    if len(text) <= cap:
        return text
    atoms = _atoms(text)
    if not atoms:
        return ""
    lo = max(0, min(start - (cap - (end - start)) // 3, len(text) - cap))
    hi = max(lo + cap, end)
    # the first atom shown: the one holding ``lo`` when little of it lies outside (or it holds
    # the match), else the next one
    i = next((k for k, (_, b) in enumerate(atoms) if b > lo), len(atoms) - 1)
    a0, b0 = atoms[i]
    if a0 < lo and lo - a0 > _SLACK and b0 <= start and i + 1 < len(atoms):
        i += 1
    # the last atom shown, the same way round
    j = max((k for k, (a, _) in enumerate(atoms) if a < hi), default=i)
    a1, b1 = atoms[j]
    if b1 > hi and b1 - hi > _SLACK and a1 >= end and j > i:
        j -= 1
    j = max(i, j)
    first, last = atoms[i][0], atoms[j][1]
    # an atom longer than any value (a blob, a run of CJK text without spaces) is cut at the edge
    if first < lo and atoms[i][1] - atoms[i][0] > _MAX_VALUE_CHARS:
        first = min(lo, start)
    if last > hi and atoms[j][1] - atoms[j][0] > _MAX_VALUE_CHARS:
        last = max(hi, end)
    return ("…" if first > 0 else "") + text[first:last] + ("…" if last < len(text) else "")


def safe_cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (plus "…") between atoms; whole if it fits."""
    if len(text) <= limit:
        return text
    cut = 0
    atoms = _atoms(text)
    for _, end in atoms:
        if end > limit:
            break
        cut = end
    if cut == 0:
        if limit <= 0 or not atoms or atoms[0][1] - atoms[0][0] <= _MAX_VALUE_CHARS:
            return "…"  # the first value does not fit: none of it rather than half
        cut = limit  # one giant token (a blob, not a value): cut it anyway
    return text[:cut].rstrip() + "…"


# --- matching ------------------------------------------------------------------------------------


def _term_pattern(term: str) -> str:
    escaped = re.escape(term)
    if CJK.search(term):
        return escaped
    if len(term) >= 4:
        return r"(?<![^\W_])" + escaped  # a word that starts with the term (FTS prefix match)
    return r"(?<![^\W_])" + escaped + r"(?![^\W_])"


def _phrase_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """Words in a row, apart only by spaces and punctuation inside one label or line (never across
    the `` | `` between two elements, the `` · `` between a row's texts, or a line break)."""
    gap = r"(?:[^\w|·\n]|_)+"
    return re.compile(r"(?<![^\W_])" + gap.join(re.escape(w) for w in words) + r"(?![^\W_])")


@dataclass
class Matcher:
    """Which of a query's terms and phrases a text holds (folded: case and diacritics ignored).

    Phrase level: 2 when a whole phrase of the query is shown word for word, 1 when two adjacent
    content words of one are ("how much did the desk lamp cost" → "desk lamp"), else 0."""

    terms: Sequence[str]
    phrases: Sequence[Sequence[str]] = ()
    pairs: list[tuple[str, str]] = field(init=False)
    _terms: list[re.Pattern[str]] = field(init=False, repr=False)
    _full: list[re.Pattern[str]] = field(init=False, repr=False)
    _pairs: list[re.Pattern[str]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._terms = [re.compile(_term_pattern(t)) for t in self.terms]
        self._full = [_phrase_pattern(p) for p in self.phrases]
        pairs = {
            (a, b)
            for p in self.phrases
            if len(p) > 2
            for a, b in itertools.pairwise(p)
            if is_content(a) and is_content(b)
        }
        whole = {tuple(p) for p in self.phrases}
        self.pairs = sorted(p for p in pairs if p not in whole)
        self._pairs = [_phrase_pattern(p) for p in self.pairs]

    def covered(self, text: str) -> set[int]:
        """Indices of the terms found in ``text``."""
        folded = fold(text)
        return {i for i, pattern in enumerate(self._terms) if pattern.search(folded)}

    def phrase_level(self, text: str) -> int:
        folded = fold(text)
        if any(p.search(folded) for p in self._full):
            return 2
        return 1 if any(p.search(folded) for p in self._pairs) else 0

    def score(self, text: str) -> tuple[int, int]:
        """(phrase level, terms found): how well ``text`` matches."""
        return self.phrase_level(text), len(self.covered(text))

    def first(self, text: str) -> tuple[int, int] | None:
        """The span of the first phrase match, else of the first term match."""
        folded = fold(text)
        for patterns in (self._full, self._pairs, self._terms):
            spans = [m.span() for p in patterns if (m := p.search(folded))]
            if spans:
                return min(spans)
        return None


# --- snippets ------------------------------------------------------------------------------------


def _segments(text: str) -> list[str]:
    return [p for p in (flat(part) for part in _SENTENCE.split(text)) if p]


def snippet(text: str, matcher: Matcher, cap: int = SNIPPET_CHARS) -> str:
    """The best matching segment of ``text`` with neighbours, about ``cap`` characters, one line,
    as one quoted string (``quote_untrusted``: recalled text is device or model text).

    Segments are lines and sentences (:func:`label_snippet`: element labels). Picked in turn while they fit: the best segment (a phrase, then the most terms),
    segments that show terms not shown yet ("Bedtime" after "Alarm"), then the neighbours of
    what is shown (a label's value is next to it). Joined back with a space; "…" marks a gap."""
    return quote_untrusted(_joined(_snippet_parts(_segments(text), matcher, cap, 1), " "), None)


def label_snippet(labels: Sequence[str], matcher: Matcher, cap: int = SNIPPET_CHARS) -> str:
    """:func:`snippet` over a screen's element labels: each shown label is quoted on its own
    (``"Wombat" | "Koala"``), so no label can pass for another or leave its quotes."""
    parts = _snippet_parts([p for p in (flat(label) for label in labels) if p], matcher, cap, 3)
    return _joined([part if part == "…" else quote_untrusted(part, None) for part in parts], " | ")


def _snippet_parts(segments: list[str], matcher: Matcher, cap: int, gap: int) -> list[str]:
    """The segments :func:`snippet` shows, in order, with "…" for each gap (``gap``: the joiner's
    length)."""
    if not segments:
        return []
    covers = [matcher.covered(s) for s in segments]
    levels = [matcher.phrase_level(s) for s in segments]
    best = max(range(len(segments)), key=lambda k: (levels[k], len(covers[k]), -k))
    if len(segments[best]) >= cap:
        span = matcher.first(segments[best]) or (0, 0)
        return [window(segments[best], span[0], span[1], cap)]
    chosen = [best]
    used = len(segments[best])
    shown = set(covers[best])

    def take(k: int) -> bool:
        nonlocal used
        if 0 <= k < len(segments) and k not in chosen and used + gap + len(segments[k]) <= cap:
            chosen.append(k)
            used += gap + len(segments[k])
            return True
        return False

    while True:  # segments with terms not shown yet, most new terms first
        new = [k for k in range(len(segments)) if k not in chosen and covers[k] - shown]
        if not new:
            break
        k = max(new, key=lambda k: (len(covers[k] - shown), levels[k], -k))
        if not take(k):
            break
        shown |= covers[k]
    for distance in (1, 2):
        for k in list(chosen):
            take(k + distance)
            take(k - distance)
    out: list[str] = ["…"] if min(chosen) > 0 else []
    last = -1
    for k in sorted(chosen):
        if last >= 0 and k != last + 1:
            out.append("…")
        out.append(segments[k])
        last = k
    if max(chosen) < len(segments) - 1:
        out.append("…")
    return out


def _joined(parts: Sequence[str], sep: str) -> str:
    """``parts`` joined with ``sep``, a gap as `` … ``, "…" at either end without a space."""
    out = ""
    for i, part in enumerate(parts):
        if i == 0:
            out = part
        elif part == "…":
            out += "…" if i == len(parts) - 1 else " …"
        elif parts[i - 1] == "…":
            out += part if i == 1 else " " + part
        else:
            out += sep + part
    return out


# --- screen text ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScreenElement:
    cls: str
    label: str
    desc: str
    flags: tuple[str, ...]

    def line(self) -> str:
        """``Switch "ON" desc="Wi-Fi" {checked}``: the element list's line without index, id and
        point (a recalled screen is not the current one: nothing here can be tapped)."""
        parts = [self.cls or "View"]
        if self.label:
            parts.append(quote_untrusted(safe_cut(self.label, MAX_LABEL_CHARS), None))
        if self.desc:
            parts.append("desc=" + quote_untrusted(safe_cut(self.desc, MAX_LABEL_CHARS), None))
        if self.flags:
            parts.append("{" + ",".join(self.flags) + "}")
        return " ".join(parts)


@dataclass(frozen=True)
class ScreenText:
    """A recorded screen as text: its elements (system bars and keyboard left out)."""

    elements: tuple[ScreenElement, ...] = ()
    keyboard: bool = False
    problem: str | None = None  # why there is no text (no dump, unreadable dump)

    def labels(self) -> list[str]:
        """Every distinct label and description, in screen order (what recall indexes)."""
        out: list[str] = []
        for element in self.elements:
            for text in (element.label, element.desc):
                text = flat(text)
                if text and text not in out:
                    out.append(text)
        return out

    def lines(self) -> list[str]:
        return [e.line() for e in self.elements]


def screen_text(xml: bytes | str | None) -> ScreenText:
    """The screen text of one UI dump (:class:`ScreenText`); never raises on bad XML."""
    if not xml:
        return ScreenText(problem="no UI dump was recorded")
    from artemis_cli.perception.elements import index_elements
    from artemis_cli.perception.hierarchy import parse_hierarchy

    try:
        tree = parse_hierarchy(xml)
        return screen_text_of(tree, index_elements(tree))
    except (ArtemisError, ValueError) as exc:
        return ScreenText(problem=f"the UI dump could not be read ({type(exc).__name__})")


def screen_text_of(tree: UITree, elements: Sequence[Element]) -> ScreenText:
    """The screen text of an already parsed dump and its element list (no parsing: what the
    step writer can pass to ``Recall.index_step(screen=…)``)."""
    from artemis_cli.perception.elements import element_flags
    from artemis_cli.perception.structure import short_class
    from artemis_cli.perception.windows import Layer, keyboard_in_dump, order_windows

    windows = order_windows(tree)
    layers: dict[int, Layer] = {}
    for win in windows:
        for i in range(win.root, win.end):
            layers[i] = win.layer
    position = {id(node): i for i, node in enumerate(tree.nodes)}
    keyboard = bool(keyboard_in_dump(windows))  # its keys are no elements: the window says it
    out: list[ScreenElement] = []
    for element in elements:
        node = element.node
        layer = layers.get(position.get(id(node), -1), Layer.APP)
        if layer in (Layer.STATUS_BAR, Layer.NAV_BAR, Layer.DECOR):
            continue
        label = flat(element.label or "")
        desc = flat(node.content_desc or "") if node.text and node.content_desc != node.text else ""
        if node.password:
            label, desc = flat(node.hint or ""), ""
        flags = tuple(f for f in element_flags(node) if f in _STATE_FLAGS)
        if not (label or desc):
            continue
        cls = "".join(ch if ch.isprintable() and not ch.isspace() else "_" for ch in short_class(node.class_name))
        out.append(ScreenElement(cls, label, desc, flags))
    return ScreenText(tuple(out), keyboard)


_BAR_IDS = ("status_bar", "navigation_bar", "navbar", "nav_bar")


def index_text_from_xml(xml: bytes | str | None) -> str | None:
    """Every text and description of a UI dump, `` | ``-separated, for the search index: a quick
    pass over the XML (no element list, a fraction of a millisecond), leaving out the keyboard,
    the status and navigation bars and password text. None when the dump cannot be read this way
    (the caller falls back to :func:`screen_text`)."""
    if not xml:
        return None
    from lxml import etree

    from artemis_cli.perception.windows import SYSTEM_UI, is_input_method_package

    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, huge_tree=True,
                             remove_comments=True, remove_pis=True)
    try:
        data = xml.encode("utf-8") if isinstance(xml, str) else xml
        root = etree.fromstring(data, parser)
    except (etree.LxmlError, ValueError):
        return None
    if root is None or root.tag not in ("hierarchy", "node"):
        return None
    windows = list(root) if root.tag == "hierarchy" else [root]
    out: dict[str, None] = {}
    for window in windows:
        package = window.get("package") or ""
        if is_input_method_package(package):
            continue
        nodes = list(window.iter())
        if package == SYSTEM_UI and any(bar in (n.get("resource-id") or "") for n in nodes for bar in _BAR_IDS):
            continue
        for node in nodes:
            if (node.get("visible-to-user") or "").lower() == "false":
                continue
            for attr in ("content-desc",) if node.get("password") == "true" else ("text", "content-desc"):
                text = flat(node.get(attr) or "")
                if text:
                    out.setdefault(text, None)
    return " | ".join(out)


def ui_text_from_xml(xml: bytes | str | None) -> str:
    """Labels of the screen's elements (what the element list shows), `` | ``-separated."""
    return " | ".join(screen_text(xml).labels())
