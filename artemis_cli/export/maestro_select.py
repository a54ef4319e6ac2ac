"""Maestro selectors that pick exactly one element of a recorded screen.

Maestro (``maestro-orchestra`` ``buildFilter``, ``maestro-client`` ``Filters``) finds an element
like this, and :func:`matches` does the same over a parsed :class:`UITree`:

- ``text``: a regular expression (case-insensitive, DOTALL, MULTILINE) that must match the *whole*
  text, the text with newlines as spaces, the hint, or the accessibility text (content-desc); a
  pattern equal to the value also matches.  So a literal is written with the regex
  metacharacters escaped (:func:`regex_literal`).
- ``id``: a regular expression that must match the whole resource-id, or the part after its last
  ``/`` (``add_to_cart`` matches ``com.artemis.shop:id/add_to_cart``).
- the basic filters are intersected, then each match that has a matching direct child is
  replaced by the deepest such chain's last node (``deepestMatchingElement``).
- ``index: N``: the N-th (0-based) match in screen order (top, then left).

:func:`choose_selector` tries, on the screen recorded *before* the step, in order of how well a
selector survives app changes: the resource-id, the content-desc, the text, id and text together,
then the best of those with an ``index``; an element without a label of its own is found by
the text of a descendant a tap on which lands on it.  A selector is kept only when it matches
the recorded element (or a descendant of it, which Maestro taps inside it) and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.structure import TreeStructure, is_visible
from artemis_cli.perception.types import Target, UINode, UITree

__all__ = ["choose_selector", "find_node", "matches", "regex_literal"]

_FLAGS = re.IGNORECASE | re.DOTALL | re.MULTILINE
_META = frozenset("\\.^$|?*+()[]{}")


def regex_literal(text: str) -> str:
    """``text`` as a Maestro (Java) regular expression that matches exactly it: the regex
    metacharacters get a backslash (``$9.99`` -> ``\\$9\\.99``); nothing else does, so the
    flow stays readable."""
    return "".join("\\" + c if c in _META else c for c in text)


def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, _FLAGS)
    except re.error:
        return None


def _text_hit(node: UINode, rx: re.Pattern[str], pattern: str) -> bool:
    for value in (node.text, node.hint, node.content_desc):
        if not value:
            continue
        for v in (value, value.replace("\n", " ")):
            if v == pattern or rx.fullmatch(v):
                return True
    return False


def _id_hit(node: UINode, rx: re.Pattern[str]) -> bool:
    rid = node.resource_id
    return bool(rid) and bool(rx.fullmatch(rid) or rx.fullmatch(rid.rsplit("/", 1)[-1]))


def matches(tree: UITree, selector: dict[str, Any]) -> list[int]:
    """Indices (into ``tree.nodes``) of the distinct elements ``selector`` (``id`` / ``text`` /
    ``index``) finds, in screen order; [] when it finds none or is not understood."""
    if set(selector) - {"text", "id", "index", "optional"} or not ({"text", "id"} & set(selector)):
        return []
    text_rx = id_rx = None
    pattern = str(selector.get("text", ""))
    if "text" in selector and (text_rx := _compile(pattern)) is None:
        return []
    if "id" in selector and (id_rx := _compile(str(selector["id"]))) is None:
        return []

    def hit(node: UINode) -> bool:
        return (text_rx is None or _text_hit(node, text_rx, pattern)) and (id_rx is None or _id_hit(node, id_rx))

    nodes = tree.nodes
    ok = [hit(n) for n in nodes]
    structure = TreeStructure.of(tree)
    children: dict[int, list[int]] = {}
    for i, parent in enumerate(structure.parent):
        if parent >= 0:
            children.setdefault(parent, []).append(i)

    def deepest(i: int) -> int:
        while True:
            kids = [c for c in children.get(i, ()) if ok[c]]
            if not kids:
                return i
            i = kids[-1]

    found = sorted({deepest(i) for i, m in enumerate(ok) if m},
                   key=lambda i: (nodes[i].bounds.top, nodes[i].bounds.left, i))
    if "index" in selector:
        k = int(selector["index"])
        return [found[k]] if 0 <= k < len(found) else []
    return found


def find_node(tree: UITree, target: Target) -> int | None:
    """The node of ``tree`` the recorded target is (same bounds and class, and id / content-desc
    when recorded); None when the screen has no such node."""
    if target.bounds is None or target.label_source == "none":
        return None
    same = [
        i for i, n in enumerate(tree.nodes)
        if tuple(n.bounds.as_list()) == tuple(target.bounds) and n.class_name == target.class_name
        and n.resource_id == target.resource_id and n.content_desc == target.content_desc
    ]
    if len(same) > 1:  # the text tells them apart, unless it was borrowed from descendants
        same = [i for i in same if tree.nodes[i].text == target.text] or same
    return same[-1] if same else None


def _inside(structure: TreeStructure, found: list[int], i: int) -> bool:
    """``found`` is exactly one element, and it is ``i`` or one of its descendants."""
    return len(found) == 1 and i <= found[0] < structure.subtree_end[i]


def _labels(node: UINode) -> list[dict[str, Any]]:
    """Selectors naming ``node`` by its own attributes, in the order they are preferred."""
    out: list[dict[str, Any]] = []
    rid = node.resource_id
    if rid:
        short = rid.rsplit("/", 1)[-1]
        if short and regex_literal(short) == short:
            out.append({"id": short})
        out.append({"id": regex_literal(rid)})
    if node.content_desc.strip():
        out.append({"text": regex_literal(node.content_desc)})
    if node.text.strip():
        out.append({"text": regex_literal(node.text)})
    if rid and (node.text.strip() or node.content_desc.strip()):
        out.append({"id": regex_literal(rid), "text": regex_literal(node.text or node.content_desc)})
    return out


def _indexable(tree: UITree, found: Iterable[int]) -> bool:
    """Every match is fully on screen and not reported invisible: Maestro, which leaves
    off-screen elements out, counts them the same way."""
    w, h = tree.screen_width, tree.screen_height
    for i in found:
        n = tree.nodes[i]
        b = n.bounds
        if not is_visible(n, w, h) or b.left < 0 or b.top < 0 or b.right > w or b.bottom > h:
            return False
    return True


def _for_node(tree: UITree, structure: TreeStructure, node_index: int, owner: int) -> dict[str, Any] | None:
    """A selector naming ``node_index`` alone (a match inside ``owner`` is fine), or None."""
    candidates = _labels(tree.nodes[node_index])
    for sel in candidates:
        if _inside(structure, matches(tree, sel), owner):
            return sel
    best: tuple[int, dict[str, Any]] | None = None
    for sel in candidates:
        found = matches(tree, sel)
        hits = [k for k, i in enumerate(found) if owner <= i < structure.subtree_end[owner]]
        if len(hits) == 1 and _indexable(tree, found) and (best is None or len(found) < best[0]):
            best = (len(found), {**sel, "index": hits[0]})
    return best[1] if best else None


def choose_selector(tree: UITree, target: Target) -> dict[str, Any] | None:
    """The most robust selector that finds the recorded target, and only it, on ``tree`` (the
    screen before the step); None when no id / text / index selector does."""
    i = find_node(tree, target)
    if i is None:
        return None
    structure = TreeStructure.of(tree)
    sel = _for_node(tree, structure, i, i)
    if sel is not None:
        return sel
    # an unlabelled container (a row, a card): a labelled descendant a tap on which lands on it
    index = HitIndex.of(tree)
    for j in range(i + 1, structure.subtree_end[i]):
        node = tree.nodes[j]
        if not (node.text.strip() or node.content_desc.strip()) or not structure.visible(j):
            continue
        x, y = node.bounds.center
        if index.hit(x, y) != i:
            continue
        sel = _for_node(tree, structure, j, i)
        if sel is not None:
            return sel
    return None
