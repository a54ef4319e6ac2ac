"""Indexed elements: the visible nodes worth showing to the model, one line each.

Line format (pinned by golden tests; :func:`parse_element_lines` is its exact inverse)::

    [{i}] {ShortClass} "{label}" desc="{content_desc}" id={short_id} {flags} @({cx},{cy})

* ``"{label}"`` — text, else content-desc, else a label borrowed from descendants; omitted if
  none. A text field's hint is never its label, nor is the text of an empty field, which Android
  reports as the hint (``text`` = ``hint``: :func:`showing_hint`).
* `` desc="…"`` — only when text and content-desc both exist and differ.
* `` hint="…"`` — a text field's hint (placeholder), when it has one that differs from its label:
  a field with only a hint shows ``hint="Search"`` and no label; one with text shows both.
* `` id=…`` — only with a resource id; the part after ``:id/``.  Ids that contain whitespace or
  start with a quote (Compose test tags such as ``RCS chat with A``) are JSON-quoted (never cut).
* `` {click,…}`` — flags in the fixed order of :data:`FLAG_ORDER`; omitted when none apply.
* ``@(cx,cy)`` — where to tap it, in the model's coordinate space: the centre of the on-screen
  part of the bounds, or, when something drawn over the element takes that point, the centre of
  the largest part of it left uncovered (``Element.point``).

Strings are kept whole up to :data:`MAX_LABEL_CHARS` (2,000 characters, a guard against
pathological text only: this is the current screen, whose text the model may need to read;
history lines cut to 80) plus "…", and written with ``json.dumps(ensure_ascii=False)``;
line-separator characters JSON leaves raw (U+0085, U+2028, U+2029) and ``</`` are escaped as well
(:mod:`artemis_cli.perception.quoting`), so device text can never break a line or close a fence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.modal import Modal, modal_in_front
from artemis_cli.perception.quoting import MAX_SCREEN_TEXT_CHARS, quote_untrusted
from artemis_cli.perception.structure import (
    can_borrow_label,
    is_actionable,
    is_edit,
    own_label,
    short_class,
)
from artemis_cli.perception.tapping import Budget, place, visible_center
from artemis_cli.perception.types import Element, UINode, UITree
from artemis_cli.perception.windows import Layer

__all__ = [
    "FLAG_ORDER",
    "MAX_LABEL_CHARS",
    "ParsedElement",
    "display_hint",
    "display_label",
    "element_flags",
    "field_text",
    "index_elements",
    "index_screen",
    "parse_element_lines",
    "render_element_line",
    "render_element_list",
    "showing_hint",
]

MAX_LABEL_CHARS = MAX_SCREEN_TEXT_CHARS
FLAG_ORDER = (
    "click",
    "long",
    "scroll",
    "edit",
    "checked",
    "unchecked",
    "selected",
    "focused",
    "password",
    "disabled",
)


# --- indexing --------------------------------------------------------------------------------


def showing_hint(node: UINode) -> bool:
    """An empty text field: Android reports an empty field's hint as its text too (uiautomator
    dumps ``text`` = ``hint``), so a field whose text is its hint holds nothing."""
    return is_edit(node) and bool(node.hint) and node.text == node.hint


def field_text(node: UINode) -> str:
    """The node's text as content: "" for a text field that only shows its hint."""
    return "" if showing_hint(node) else node.text


def display_label(node: UINode) -> str:
    """Text, else content-desc. A text field's hint is not content: it is shown apart
    (:func:`display_hint`), and an empty field's text, which Android fills with the hint, is no
    label either."""
    return node.content_desc if showing_hint(node) else own_label(node)


def display_hint(node: UINode, label: str) -> str:
    """A text field's hint when it says something its ``label`` does not ("" otherwise)."""
    hint = node.hint.strip() if is_edit(node) and node.hint else ""
    return hint if hint and hint != label.strip() else ""


def _already_in(label: str, node: UINode) -> bool:
    """Does ``label``, as the model sees it (cut to MAX_LABEL_CHARS), show all that the node's
    own line would (its text, cut the same way)?"""
    own = own_label(node).strip()
    return bool(own) and own[:MAX_LABEL_CHARS] in label[:MAX_LABEL_CHARS]


def _in_drawing_order(index: HitIndex) -> Iterator[int]:
    """Node indices window by window as the screen draws them (bottom to top), each window's nodes
    in document order. uiautomator lists windows in set order, which changes from dump to dump
    of one screen; numbering in drawing order keeps an element's number stable across them.

    The keyboard's window (``Layer.IME``) is left out: its keys are noise on every step (33 lines,
    each marked), the head line says ``Keyboard: shown`` and ``press_key enter/delete`` presses
    the keys a task needs. It still takes touches: what it covers gets no tap point."""
    for window in index.windows:
        if window.layer == Layer.IME:
            continue
        yield from (i for i in range(window.root, window.end) if i in index.window_of)


@dataclass(frozen=True)
class Screen:
    """The element list of a tree, and what a modal window in front hides (``perception.modal``):
    ``behind`` elements of the windows under ``modal`` that would be listed without it."""

    elements: list[Element]
    modal: Modal | None = None
    behind: int = 0


def index_elements(tree: UITree) -> list[Element]:
    """The element list of ``tree`` (:func:`index_screen`)."""
    return index_screen(tree).elements


def index_screen(tree: UITree) -> Screen:
    """Visible, worth-showing nodes with indices 0..n-1: windows in drawing order (the app first,
    the navigation bar last), each window's nodes in document order.

    Worth showing: actionable (click, long-click, check, scroll, focusable text field) or carrying
    text/content-desc.  A plain text node is dropped when its nearest actionable ancestor is shown
    and that ancestor's label, as rendered (cut to MAX_LABEL_CHARS), already shows the text as its
    own line would (cut the same way).  An actionable node without a label of its own
    borrows one from its descendants (``Element.label_borrowed``).

    Each element gets the point to tap (``Element.point``, :mod:`~artemis_cli.perception.tapping`):
    a point of its visible part that the hit test maps back to it.  Left out, because no tap can
    reach them and offering them would send the tap to whatever is over them:

    * nodes of windows on another display (not on the screenshot);
    * the windows added from ``dumpsys window`` to a dump of the active window (the bars, the
      keyboard: :mod:`~artemis_cli.perception.wm_windows`), which have no content of their own;
    * the keyboard's keys (the input method's window: see :func:`_in_drawing_order`);
    * nodes that windows drawn above cover entirely (not on the screenshot either);
    * controls whose every point belongs to another control the hit rule prefers — a node with
      the same bounds drawn on top of it, or smaller controls tiling it; that control is listed;
    * what the windows under a modal window hold (a dialog in front takes every touch:
      :mod:`~artemis_cli.perception.modal`); ``Screen.behind`` counts them.

    Text that no touch reaches (every point of it is taken by a control: a backdrop drawn under a
    sheet, a launcher workspace, a container's list) is kept for reading, at its centre.  On huge
    dumps the search for tap points is capped (:class:`~artemis_cli.perception.tapping.Budget`).
    """
    index = HitIndex.of(tree)
    structure = index.structure
    nodes = tree.nodes
    labels: dict[int, str] = {}  # label of every shown actionable node, for the noise rule
    chosen: list[tuple[int, str, bool, tuple[int, int]]] = []
    budget = Budget()
    modal = modal_in_front(index)
    behind = 0
    for i in _in_drawing_order(index):
        node = nodes[i]
        if node.synthetic or not structure.visible(i):
            continue  # a window known from the window manager only: nothing in it to act on
        actionable = is_actionable(node)
        label = display_label(node)
        borrowed = False
        if actionable:
            if not label and can_borrow_label(node):
                label = structure.borrowed_label(i)
                borrowed = bool(label)
        elif not label:
            continue
        else:
            ancestor = structure.nearest_actionable_ancestor(i)
            if ancestor in labels and _already_in(labels[ancestor], node):
                continue
        point = visible_center(node.bounds, tree.screen_width, tree.screen_height)
        if i in index.kinds:
            placement = place(index, i, budget)
            if placement.point is None and (placement.covered or actionable):
                continue  # no touch can reach it
            point = placement.point or point
        if actionable:
            labels[i] = label
        if modal is not None and index.window_of[i] < modal.position:
            behind += 1  # under the dialog in front: no touch reaches it
            continue
        chosen.append((i, label, borrowed, point))
    elements = [
        Element(index=k, node=nodes[i], label=label, label_borrowed=borrowed, point=point)
        for k, (i, label, borrowed, point) in enumerate(chosen)
    ]
    return Screen(elements, modal, behind)


# --- rendering -------------------------------------------------------------------------------


def _quote(s: str, limit: int | None = MAX_LABEL_CHARS) -> str:
    return quote_untrusted(s, limit)


def _bare_token_ok(s: str) -> bool:
    return bool(s) and not s.startswith('"') and all(ch.isprintable() and not ch.isspace() for ch in s)


def _render_short_class(class_name: str) -> str:
    name = short_class(class_name)
    name = "".join(ch if ch.isprintable() and not ch.isspace() else "_" for ch in name)
    return name or "View"


def _short_id(resource_id: str) -> str:
    marker = ":id/"
    pos = resource_id.find(marker)
    return resource_id[pos + len(marker) :] if pos >= 0 else resource_id


def element_flags(node: UINode) -> tuple[str, ...]:
    flags: list[str] = []
    if node.clickable:
        flags.append("click")
    if node.long_clickable:
        flags.append("long")
    if node.scrollable:
        flags.append("scroll")
    if is_edit(node):
        flags.append("edit")
    if node.checkable:
        flags.append("checked" if node.checked else "unchecked")
    if node.selected:
        flags.append("selected")
    if node.focused:
        flags.append("focused")
    if node.password:
        flags.append("password")
    if not node.enabled:
        flags.append("disabled")
    return tuple(flags)


def render_element_line(element: Element, space: CoordinateSpace) -> str:
    node = element.node
    parts = [f"[{element.index}]", _render_short_class(node.class_name)]
    label = element.label if element.label else display_label(node)
    if label:
        parts.append(_quote(label))
    text = field_text(node)
    if text and node.content_desc and text != node.content_desc:
        parts.append("desc=" + _quote(node.content_desc))
    hint = display_hint(node, label)
    if hint:
        parts.append("hint=" + _quote(hint))
    if node.resource_id:
        sid = _short_id(node.resource_id)
        parts.append("id=" + (sid if _bare_token_ok(sid) else _quote(sid, limit=None)))
    flags = element_flags(node)
    if flags:
        parts.append("{" + ",".join(flags) + "}")
    point = element.point or visible_center(node.bounds, space.width, space.height)
    cx, cy = space.from_pixels(*point)
    parts.append(f"@({cx},{cy})")
    return " ".join(parts)


def render_element_list(elements: list[Element], space: CoordinateSpace) -> str:
    """One line per element, joined by newlines (no trailing newline; "" for no elements)."""
    return "\n".join(render_element_line(e, space) for e in elements)


# --- parsing back ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedElement:
    index: int
    short_class: str
    label: str
    desc: str
    short_id: str
    flags: tuple[str, ...]
    center: tuple[int, int]
    hint: str = ""


_HEAD = re.compile(r"\[(\d+)\] (\S+)")
_FLAGS = re.compile(r" \{([a-z]+(?:,[a-z]+)*)\}")
_ID_BARE = re.compile(r" id=([^\s\"]\S*)")
_CENTER = re.compile(r" @\((-?\d+),(-?\d+)\)")
_DECODER = json.JSONDecoder()


def _json_string_at(line: str, pos: int) -> tuple[str, int] | None:
    if pos >= len(line) or line[pos] != '"':
        return None
    try:
        value, end = _DECODER.raw_decode(line, pos)
    except ValueError:
        return None
    return (value, end) if isinstance(value, str) else None


def _parse_line(line: str) -> ParsedElement | None:
    head = _HEAD.match(line)
    if head is None:
        return None
    pos = head.end()
    label = desc = short_id = ""
    if line.startswith(' "', pos):
        got = _json_string_at(line, pos + 1)
        if got is None:
            return None
        label, pos = got
    if line.startswith(' desc="', pos):
        got = _json_string_at(line, pos + 6)
        if got is None:
            return None
        desc, pos = got
    hint = ""
    if line.startswith(' hint="', pos):
        got = _json_string_at(line, pos + 6)
        if got is None:
            return None
        hint, pos = got
    if line.startswith(' id="', pos):
        got = _json_string_at(line, pos + 4)
        if got is None:
            return None
        short_id, pos = got
    elif (bare := _ID_BARE.match(line, pos)) is not None:
        short_id, pos = bare.group(1), bare.end()
    flags: tuple[str, ...] = ()
    if (flag_match := _FLAGS.match(line, pos)) is not None:
        flags, pos = tuple(flag_match.group(1).split(",")), flag_match.end()
    center = _CENTER.match(line, pos)
    if center is None or center.end() != len(line):
        return None
    return ParsedElement(
        index=int(head.group(1)),
        short_class=head.group(2),
        label=label,
        desc=desc,
        short_id=short_id,
        flags=flags,
        center=(int(center.group(1)), int(center.group(2))),
        hint=hint,
    )


def parse_element_lines(text: str) -> list[ParsedElement]:
    """Inverse of :func:`render_element_list`; lines that are not element lines are ignored.
    Labels come back as rendered (cut to MAX_LABEL_CHARS characters plus "…")."""
    parsed: list[ParsedElement] = []
    for raw in text.split("\n"):
        element = _parse_line(raw.strip())
        if element is not None:
            parsed.append(element)
    return parsed
