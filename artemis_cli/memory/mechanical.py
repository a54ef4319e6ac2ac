"""The offline lens (SPEC §8, §10.1): a step summary from the UI dumps and screenshots alone.

Deterministic, never calls a model, labelled ``summary_source: mechanical``. Shape::

    Screen: com.android.settings, "Network & internet" list. Action: tap Switch "Wi-Fi" at
    (962,348). After: Switch "Wi-Fi" shows ON; new: "Add network"; gone: "Wi-Fi is off".

Changes are stated neutrally (app change, keyboard shown/hidden, checked state, text changes,
elements that appeared/disappeared, screenshot difference); screen text is always quoted, and
the whole text goes through :func:`neutralize_verdict_words`, so :func:`verdict_words` finds
nothing in any output. At most :data:`MAX_MECHANICAL_CHARS` characters.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from artemis_cli.errors import ArtemisError
from artemis_cli.memory.lens import LensJob, LensResult, neutralize_verdict_words
from artemis_cli.perception.dhash import dhash_hex, hamming
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.foreground import foreground_app, is_background_package
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.modal import modal_in_front
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.structure import is_actionable, short_class
from artemis_cli.perception.types import UITree

__all__ = ["MAX_MECHANICAL_CHARS", "MechanicalLens", "describe_step"]

MAX_MECHANICAL_CHARS = 600
_LABEL_CHARS = 40
_LIST_ITEMS = 4
_SWIPE_KINDS = ("swipe", "drag", "scroll", "fling")
_NAME_UNSAFE = re.compile(r"[^\w.:-]")


def _bare(name: str) -> str:
    """A package or resource id as a bare token (no quotes, spaces or line breaks), cut to 60."""
    return _NAME_UNSAFE.sub("_", name)[:60] or "unknown"


def _q(text: str) -> str:
    """Screen text as one quoted span (whitespace collapsed, cut)."""
    return quote_untrusted(" ".join(text.split()), _LABEL_CHARS)


@dataclass(frozen=True)
class _Item:
    key: tuple[str, str, str]
    kind: str  # short class name
    label: str
    checked: bool | None


@dataclass(frozen=True)
class _Screen:
    package: str | None
    title: str
    scrollable: bool
    keyboard: bool
    items: dict[tuple[str, str, str], _Item]
    modal: str = ""  # the modal window in front (``the dialog "Set alarm"``), "" for none
    modal_title: str = ""  # its title as the device shows it


def _parse(xml: str | None) -> UITree | None:
    if not xml:
        return None
    try:
        return parse_hierarchy(xml)
    except ArtemisError:
        return None


def _screen(tree: UITree | None) -> _Screen | None:
    if tree is None:
        return None
    package = foreground_app(tree)
    index = HitIndex.of(tree)
    modal = modal_in_front(index)
    # Under a modal window the element list holds the window's own elements only (what is behind
    # is not listed: perception.modal), so its items, title and scrolling are the window's.
    elements = [e for e in index_elements(tree) if not is_background_package(e.node.package)]
    ids = Counter(e.node.resource_id for e in elements if e.node.resource_id)
    items: dict[tuple[str, str, str], _Item] = {}
    title = ""
    for e in elements:
        node = e.node
        label = e.label.strip()
        if not title and label and not is_actionable(node):
            title = label
        if node.resource_id and ids[node.resource_id] == 1:
            key = ("id", node.resource_id, "")  # unique id: text/state changes are tracked
        else:
            key = ("label", node.class_name, label)
        if key in items or (key[0] == "label" and not label):
            continue
        kind = _bare(short_class(node.class_name)) if node.class_name else "element"
        items[key] = _Item(key, kind, label, node.checked if node.checkable else None)
    keyboard = any(is_background_package(n.package) and n.package != "com.android.systemui" for n in tree.nodes)
    shown = (i for i, n in enumerate(tree.nodes) if modal is None or index.window_of.get(i, -1) >= modal.position)
    scrollable = any(tree.nodes[i].scrollable for i in shown if not is_background_package(tree.nodes[i].package))
    if modal is not None and modal.title:
        title = modal.title
    if modal is None:
        return _Screen(package, title, scrollable, keyboard, items)
    return _Screen(package, title, scrollable, keyboard, items, modal.name, modal.title)


def _name(item: _Item) -> str:
    if item.label and not (item.checked is not None and item.key[0] == "id"):
        return f"{item.kind} {_q(item.label)}"
    return f"{item.kind} (id {_bare(item.key[1].rsplit('/', 1)[-1])})"


def _listing(word: str, items: list[_Item]) -> str:
    names = list(dict.fromkeys(_q(i.label) if i.label else _name(i) for i in items))  # each once
    shown = names[:_LIST_ITEMS]
    more = f" (+{len(names) - _LIST_ITEMS} more)" if len(names) > _LIST_ITEMS else ""
    return f"{word}: {', '.join(shown)}{more}"


@dataclass(frozen=True)
class _Change:
    kind: str  # app | window | title | keyboard | state | text | new | gone
    text: str  # the clause, as written
    item: _Item | None = None


def _changes(pre: _Screen, post: _Screen) -> list[_Change]:
    out: list[_Change] = []
    if pre.package != post.package:
        out.append(_Change("app", f"app changed from {_bare(pre.package or '')} to {_bare(post.package or '')}"))
    window_changed = pre.modal != post.modal
    if window_changed:
        # A dialog opened or closed: what it covers (or uncovered) is behind it, not gone or new.
        # Only a dialog that opened lists its items (new); one that closed took its own with it.
        if pre.modal:
            out.append(_Change("window", f"{pre.modal} closed", _Item(("", "", ""), "", pre.modal_title, None)))
        if post.modal:
            out.append(_Change("window", f"{post.modal} in front", _Item(("", "", ""), "", post.modal_title, None)))
    elif pre.title != post.title and post.title:
        out.append(_Change("title", f"title now {_q(post.title)}", _Item(("", "", ""), "", post.title, None)))
    if pre.keyboard != post.keyboard:
        out.append(_Change("keyboard", "keyboard shown" if post.keyboard else "keyboard hidden"))
    for key, after in post.items.items():
        before = pre.items.get(key)
        if before is None:
            continue
        if before.checked is not None and after.checked is not None and before.checked != after.checked:
            out.append(_Change("state", f"{_name(after)} shows {'ON' if after.checked else 'OFF'}", after))
        elif key[0] == "id" and before.label != after.label:
            out.append(_Change("text", f"{after.kind} (id {_bare(key[1].rsplit('/', 1)[-1])}) text {_q(before.label)} -> {_q(after.label)}", after))
    def worded(item: _Item) -> bool:  # a bare ":" or "•" says nothing
        return not item.label or any(ch.isalnum() for ch in item.label)

    new = [i for k, i in post.items.items() if k not in pre.items and worded(i)] if not window_changed or post.modal else []
    gone = [i for k, i in pre.items.items() if k not in post.items and worded(i)] if not window_changed else []
    out += [_Change("new", "", i) for i in new] + [_Change("gone", "", i) for i in gone]
    return out


def _stated(change: _Change, observed: dict[str, Any]) -> bool:
    """Whether the step's outcome (what the runtime observed, shown beside this summary) already
    states ``change``: the summary then leaves it out rather than saying it twice."""
    item = change.item
    label = item.label if item is not None else ""
    windows = " ".join([*(observed.get("windows_opened") or []), *(observed.get("windows_closed") or [])])
    text = observed.get("text") or {}
    if change.kind == "app":
        before, after = observed.get("app_before"), observed.get("app_after")
        return bool(before and after and before != after)
    if change.kind == "keyboard":
        return "keyboard" in str(observed.get("summary") or "")
    if change.kind == "title":
        return bool(label) and quote_untrusted(label, None) in windows
    if change.kind == "window":  # the outcome names it '"Set alarm" (com.android.deskclock)'
        return bool(label) and quote_untrusted(" ".join(label.split()), None)[:-1] in windows
    if change.kind == "state" and item is not None:
        return any((item.key[0] == "id" and state.get("resource_id") == item.key[1])
                   or (label and quote_untrusted(label, None) in str(state.get("element") or ""))
                   for state in observed.get("states") or [])
    if change.kind == "text":
        field = observed.get("field") or {}
        return bool(field) and (bool(field.get("password")) or field.get("shows") == label)
    if change.kind in ("new", "gone") and label:
        said = text.get("appeared" if change.kind == "new" else "disappeared") or []
        return label in said or quote_untrusted(label, None) in windows
    return False


def _clauses(changes: list[_Change]) -> list[str]:
    out = [c.text for c in changes if c.kind not in ("new", "gone")]
    for word, kind in (("new", "new"), ("gone", "gone")):
        items = [c.item for c in changes if c.kind == kind and c.item is not None]
        if items:
            out.append(_listing(word, items))
    return out


def _screen_phrase(screen: _Screen | None) -> str:
    if screen is None:
        return "Screen: UI dump unreadable."
    bits = [_bare(screen.package) if screen.package else "unknown app"]
    if screen.modal:
        bits.append(f"{screen.modal} in front" + (", a list" if screen.scrollable else ""))
    elif screen.title:
        bits.append(_q(screen.title) + (" list" if screen.scrollable else ""))
    return "Screen: " + ", ".join(bits) + "."


def _action_phrase(job: LensJob) -> str:
    phrase = " ".join(job.action_phrase.split()) or job.action_kind or "none"
    if len(phrase) > 160:
        phrase = phrase[:160] + "…"
    pts = [(int(x), int(y)) for x, y in job.points]
    if len(pts) >= 2 and job.action_kind in _SWIPE_KINDS:
        phrase += f" from ({pts[0][0]},{pts[0][1]}) to ({pts[1][0]},{pts[1][1]})"
    elif pts:
        phrase += f" at ({pts[0][0]},{pts[0][1]})"
    return f"Action: {phrase}."


def _image_distance(pre_png: bytes, post_png: bytes | None) -> int | None:
    if post_png is None:
        return None
    if post_png == pre_png:
        return 0
    try:
        return hamming(dhash_hex(pre_png), dhash_hex(post_png))
    except ArtemisError:
        return None


def _after_phrase(job: LensJob, pre: _Screen | None, post_tree: UITree | None) -> list[str]:
    if job.post_xml is None and job.post_png is None:
        return ["After: no after-capture."]
    post = _screen(post_tree)
    distance = _image_distance(job.pre_png, job.post_png)
    pieces: list[str] = []
    if pre is not None and post is not None:
        changes = _changes(pre, post)
        if changes and job.observed:
            unsaid = [c for c in changes if not _stated(c, job.observed)]
            if not unsaid:
                return []  # the outcome beside this summary says all of it
            changes = unsaid
        pieces = _clauses(changes)
    elif post is None and job.post_xml is not None:
        pieces = ["after UI dump unreadable"]
    if not pieces:
        if distance == 0:
            return ["After: no visible change."]
        if distance is None:
            return ["After: no change in the UI dump."]
        return [f"After: no change in the UI dump; screenshot differs (dHash distance {distance})."]
    # One piece per clause, so the length cap drops whole clauses, never half a quote.
    clauses = ["After: " + pieces[0], *pieces[1:]]
    return [c + ("." if i == len(clauses) - 1 else ";") for i, c in enumerate(clauses)]


def describe_step(job: LensJob) -> str:
    """The mechanical summary text of one step (deterministic; ≤ MAX_MECHANICAL_CHARS)."""
    pre_tree = _parse(job.pre_xml)
    pre = _screen(pre_tree)
    head = [_screen_phrase(pre), _action_phrase(job)]
    clauses = head + _after_phrase(job, pre, _parse(job.post_xml))
    text = ""
    for clause in clauses:
        candidate = f"{text} {clause}".strip()
        if len(candidate) > MAX_MECHANICAL_CHARS - 2:
            text = text.rstrip(";.") + " …"
            break
        text = candidate
    text = neutralize_verdict_words(text)
    if len(text) > MAX_MECHANICAL_CHARS:  # only a very long action phrase can get here
        text = neutralize_verdict_words(_screen_phrase(pre) + " Action: " + (job.action_kind or "none") + ".")
    return text


class MechanicalLens:
    """The offline :class:`~artemis_cli.memory.lens.Lens`: never calls a model."""

    source = "mechanical"

    def describe(self, job: LensJob) -> LensResult:
        return LensResult(text=describe_step(job), source=self.source, model=None)
