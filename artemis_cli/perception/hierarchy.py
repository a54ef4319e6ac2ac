"""Parse ``uiautomator dump`` / uiautomator2 XML into a :class:`UITree`.

Tolerates what real devices and tools produce: BOMs, UTF-16 and legacy encodings named in the
declaration (:mod:`~artemis_cli.perception.decoding`), invalid XML characters, text printed after
``</hierarchy>``, empty hierarchies, multi-window dumps, reformatted XML and very deep trees (the
walk is iterative).  Appium page source, which names each element after its class
(``<android.widget.Button … bounds="[…]">``) and says ``displayed`` for ``visible-to-user``, parses
the same way.  Anything that is not a UI hierarchy at all raises :class:`HierarchyParseError`, and
nothing else; a hierarchy whose elements are not nodes is refused, never read as empty.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from artemis_cli.errors import HierarchyParseError
from artemis_cli.perception.bytecache import MB, ByteLRU, cost_of
from artemis_cli.perception.decoding import decode_dump
from artemis_cli.perception.types import Bounds, UINode, UITree

__all__ = ["parse_hierarchy"]

# Characters XML 1.0 forbids (C0 controls except tab/newline/CR, surrogates, U+FFFE/U+FFFF).
_INVALID_XML_CHARS = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_CHAR_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_BOUNDS = re.compile(
    r"^\s*\[\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*\]\s*\[\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*\]\s*$"
)
_HIERARCHY_OPEN = re.compile(r"<hierarchy\b")
_HIERARCHY_CLOSE = "</hierarchy>"
_MAX_WARNINGS = 50
_ZERO = Bounds(0, 0, 0, 0)


def _valid_xml_codepoint(cp: int) -> bool:
    return (
        cp in (0x9, 0xA, 0xD) or 0x20 <= cp <= 0xD7FF or 0xE000 <= cp <= 0xFFFD or 0x10000 <= cp <= 0x10FFFF
    )


def _decode(data: str | bytes, warnings: list[str]) -> str:
    if isinstance(data, str):
        return data.lstrip("\ufeff")
    return decode_dump(data, warnings).lstrip("\ufeff")


def _clean(text: str, warnings: list[str]) -> str:
    cleaned = _INVALID_XML_CHARS.sub("", text)
    removed = len(text) - len(cleaned)

    def _ref(match: re.Match[str]) -> str:
        hex_part, dec_part = match.group(1), match.group(2)
        cp = int(hex_part, 16) if hex_part else int(dec_part)
        return match.group(0) if _valid_xml_codepoint(cp) else ""

    cleaned2 = _CHAR_REF.sub(_ref, cleaned)
    if cleaned2 != cleaned:
        removed += 1
    if removed:
        warnings.append("removed characters that are not allowed in XML")
    return cleaned2


def _isolate_document(text: str, warnings: list[str]) -> str:
    """Drop the XML declaration and anything printed before ``<hierarchy`` / after ``</hierarchy>``."""
    text = _XML_DECL.sub("", text, count=1)
    opening = _HIERARCHY_OPEN.search(text)
    if opening is not None:
        if text[: opening.start()].strip():
            warnings.append("ignored text before <hierarchy>")
        text = text[opening.start() :]
        end = text.rfind(_HIERARCHY_CLOSE)
        if end >= 0:
            tail = text[end + len(_HIERARCHY_CLOSE) :]
            if tail.strip():
                warnings.append("ignored text after </hierarchy>")
            text = text[: end + len(_HIERARCHY_CLOSE)]
    return text.strip()


def _parser(recover: bool) -> etree.XMLParser:
    return etree.XMLParser(
        recover=recover,
        resolve_entities=False,
        no_network=True,
        huge_tree=True,  # lifts libxml2's depth limit; entities are never expanded
        remove_comments=True,
        remove_pis=True,
    )


def _parse_root(text: str, warnings: list[str]) -> etree._Element:
    if not text:
        raise HierarchyParseError("UI hierarchy is empty (no XML at all)")
    try:
        root = etree.fromstring(text, _parser(recover=False))
    except (etree.LxmlError, ValueError) as exc:
        first_error = str(exc) or type(exc).__name__
        try:
            root = etree.fromstring(text, _parser(recover=True))
        except (etree.LxmlError, ValueError):
            root = None
        if root is None or not (root.tag == "hierarchy" or _is_node(root)):
            raise HierarchyParseError(f"UI hierarchy is not valid XML: {first_error}") from None
        warnings.append(f"malformed XML ({first_error}); kept what could be recovered")
    if not (root.tag == "hierarchy" or _is_node(root)):
        tag = root.tag if isinstance(root.tag, str) else "?"
        raise HierarchyParseError(
            f"not a UI hierarchy: root element is <{tag[:60]}>, expected <hierarchy> "
            "(an Android uiautomator dump or Appium page source)"
        )
    return root


def _bool(value: str | None) -> bool:
    return value is not None and value.strip().lower() == "true"


def _parse_bounds(raw: str | None, path: str, warnings: list[str]) -> Bounds:
    if raw is None or raw == "":
        return _ZERO
    match = _BOUNDS.match(raw)
    if match is None:
        _warn(warnings, f"node {path}: malformed bounds {raw[:40]!r}; using [0,0][0,0]")
        return _ZERO
    left, top, right, bottom = (int(g) for g in match.groups())
    if right < left or bottom < top:
        _warn(warnings, f"node {path}: inverted bounds {raw[:40]!r}; clamped to an empty box")
        right, bottom = max(left, right), max(top, bottom)
    return Bounds(left, top, right, bottom)


def _warn(warnings: list[str], message: str) -> None:
    if len(warnings) < _MAX_WARNINGS:
        warnings.append(message)
    elif len(warnings) == _MAX_WARNINGS:
        warnings.append("further warnings suppressed")


def _visible(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.strip().lower() != "false"


def _int_attr(a: Any, name: str, path: str, warnings: list[str]) -> int | None:
    """An optional integer attribute (``display-id``, ``drawing-order``); a malformed one is a
    warning and None."""
    raw = a.get(name)
    if raw is None:
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        _warn(warnings, f"node {path}: malformed {name} {str(raw)[:20]!r}; ignored")
        return None


def _node(elem: etree._Element, path: str, depth: int, warnings: list[str]) -> UINode:
    a = elem.attrib

    def s(key: str) -> str:
        value = a.get(key)
        return "" if value is None else str(value)

    visible = a.get("visible-to-user")
    if visible is None:
        visible = a.get("displayed")  # Appium page source
    return UINode(
        path=path,
        depth=depth,
        class_name=s("class") or (str(elem.tag) if elem.tag != "node" else ""),
        text=s("text"),
        resource_id=s("resource-id"),
        package=s("package"),
        content_desc=s("content-desc"),
        bounds=_parse_bounds(a.get("bounds"), path, warnings),
        checkable=_bool(a.get("checkable")),
        checked=_bool(a.get("checked")),
        clickable=_bool(a.get("clickable")),
        enabled=not (a.get("enabled") is not None and a.get("enabled", "").strip().lower() == "false"),
        focusable=_bool(a.get("focusable")),
        focused=_bool(a.get("focused")),
        scrollable=_bool(a.get("scrollable")),
        long_clickable=_bool(a.get("long-clickable")),
        password=_bool(a.get("password")),
        selected=_bool(a.get("selected")),
        visible_to_user=_visible(visible),
        naf=_bool(a.get("NAF")),
        hint=s("hint"),
        display_id=_int_attr(a, "display-id", path, warnings),
        drawing_order=_int_attr(a, "drawing-order", path, warnings),
        **(_window_attrs(a) if depth == 0 else {}),
    )


def _window_attrs(a: Any) -> dict[str, Any]:
    """What :mod:`~artemis_cli.perception.wm_windows` wrote on a top-level node (never read below it)."""
    flags = a.get("window-flags")
    return {"window_title": str(a.get("window-title") or ""), "window_type": str(a.get("window-type") or ""),
            "window_flags": None if flags is None else tuple(str(flags).split()),
            "synthetic": _bool(a.get("synthetic"))}


def _is_node(elem: etree._Element) -> bool:
    """``<node>``, or an element named after its class that has ``bounds`` (Appium page source)."""
    tag = elem.tag
    return isinstance(tag, str) and (tag == "node" or (tag != "hierarchy" and "bounds" in elem.attrib))


def _node_children(elem: etree._Element) -> list[etree._Element]:
    return [child for child in elem if _is_node(child)]


def _top_level(root: etree._Element, warnings: list[str]) -> list[etree._Element]:
    if _is_node(root):
        return [root]
    tops = _node_children(root)
    others = sorted({str(c.tag)[:60] for c in root if isinstance(c.tag, str) and not _is_node(c)})
    if others and not tops:
        raise HierarchyParseError(
            "not a UI hierarchy: <hierarchy> holds no nodes, only "
            + ", ".join(f"<{t}>" for t in others[:5])
            + " (expected <node> elements, or class-named elements with bounds as in Appium page source)"
        )
    if others:
        warnings.append("ignored elements that are not nodes: " + ", ".join(f"<{t}>" for t in others[:5]))
    return tops


def _walk(root: etree._Element, warnings: list[str]) -> list[UINode]:
    """Pre-order walk with an explicit stack, so depth is only limited by memory."""
    tops = _top_level(root, warnings)
    nodes: list[UINode] = []
    stack: list[tuple[etree._Element, str, int]] = [
        (elem, str(i), 0) for i, elem in reversed(list(enumerate(tops)))
    ]
    while stack:
        elem, path, depth = stack.pop()
        nodes.append(_node(elem, path, depth, warnings))
        children = _node_children(elem)
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], f"{path}.{i}", depth + 1))
    return nodes


def _rotation(root: etree._Element, warnings: list[str]) -> int:
    raw = root.attrib.get("rotation") if root.tag == "hierarchy" else None
    if raw is None:
        return 0
    try:
        value = int(str(raw).strip())
    except ValueError:
        warnings.append(f"malformed rotation {str(raw)[:20]!r}; using 0")
        return 0
    if value not in (0, 1, 2, 3):
        warnings.append(f"unexpected rotation {value}; using 0")
        return 0
    return value


def _declared_size(root: etree._Element) -> tuple[int, int] | None:
    """Appium's ``<hierarchy width=… height=…>``."""
    if root.tag != "hierarchy":
        return None
    try:
        width, height = int(str(root.attrib["width"])), int(str(root.attrib["height"]))
    except (KeyError, ValueError):
        return None
    return (width, height) if width > 0 and height > 0 else None


def _screen_size(
    nodes: list[UINode], hint: tuple[int, int] | None, declared: tuple[int, int] | None, warnings: list[str]
) -> tuple[int, int]:
    if hint is not None:
        width, height = hint
        if width > 0 and height > 0:
            return int(width), int(height)
        warnings.append(f"ignored invalid screen size hint {hint!r}")
    if declared is not None:
        return declared
    tops = [n for n in nodes if n.depth == 0]
    width = max((n.bounds.right for n in tops), default=0)
    height = max((n.bounds.bottom for n in tops), default=0)
    return max(0, width), max(0, height)


#: Bytes a parsed node holds (its UINode, Bounds and strings), and what a tree adds per node and
#: per tree once its derived indexes are built (``UITree.cached``: hit index, modal, element
#: list, the outcome's UI signature and fingerprint). Measured with tracemalloc over the 43 real
#: dumps in fixtures/real-dumps: at most ~940 B per node for the nodes, ~650 B per node on average
#: plus ~7.6 KB per tree for the indexes, and ~215 B per node for the UI signature.
NODE_BYTES = 1_000
TREE_NODE_BYTES = NODE_BYTES + 900
TREE_BYTES = 8 * 1024


def _parsed_cost(key: bytes, parsed: _Parsed) -> int:
    return len(key) + NODE_BYTES * len(parsed.nodes) + cost_of(parsed.warnings)


def _tree_cost(key: tuple[bytes, tuple[int, ...] | None], tree: UITree) -> int:
    return TREE_BYTES + TREE_NODE_BYTES * len(tree.nodes) + cost_of(tree.warnings)


#: Recently parsed dumps: the parse itself by the dump's SHA-256 (``_RAW``), and the tree made of
#: it by (digest, screen size hint) (``_PARSED``). An unchanged screen's dump (the step after a
#: no-op, the dumps a step's summary reads again with no size hint) is not parsed again. Safe to
#: share: a UITree, its nodes and its warnings are immutable (frozen dataclasses, tuples); what
#: ``UITree.cached`` keeps on a tree is derived from it alone. Bounds: 4 MB of trees (~50 sim
#: screens of ~45 nodes, ~25 real ones of 100: the screens a session goes back and forth between)
#: and 2 MB of parses; a parse and its tree share their nodes, so counting both is an upper bound.
_RAW: ByteLRU[bytes, _Parsed] = ByteLRU("perception.parsed_dumps", 2 * MB, _parsed_cost)
_PARSED: ByteLRU[tuple[bytes, tuple[int, ...] | None], UITree] = ByteLRU("perception.ui_trees", 4 * MB, _tree_cost)


@dataclass(frozen=True)
class _Parsed:
    """What a dump says, before a screen size is chosen."""

    rotation: int
    nodes: tuple[UINode, ...]
    declared: tuple[int, int] | None
    warnings: tuple[str, ...]


def parse_hierarchy(xml: str | bytes, screen_size: tuple[int, int] | None = None) -> UITree:
    """Parse a UI dump. ``screen_size`` (width, height) from the device wins over the XML's bounds.

    Bounds are taken as they are: uiautomator already reports them in display coordinates for
    the current rotation, so nothing is swapped. The same dump with the same ``screen_size``
    gives the same (shared, immutable) tree object while it is in the parse cache (``_PARSED``).
    """
    if not isinstance(xml, (str, bytes, bytearray)):
        raise HierarchyParseError(f"UI hierarchy must be text, not {type(xml).__name__}")
    data = xml.encode("utf-8", "surrogatepass") if isinstance(xml, str) else bytes(xml)
    digest = (b"s" if isinstance(xml, str) else b"b") + hashlib.sha256(data).digest()
    key = (digest, tuple(screen_size) if screen_size is not None else None)
    tree = _PARSED.get(key)
    parsed = _RAW.get(digest) if tree is None else None
    if tree is not None:
        return tree
    if parsed is None:
        parsed = _parse(xml)
    warnings = list(parsed.warnings)
    width, height = _screen_size(list(parsed.nodes), screen_size, parsed.declared, warnings)
    tree = UITree(rotation=parsed.rotation, nodes=parsed.nodes, screen_width=width, screen_height=height,
                  warnings=tuple(warnings))
    _RAW.put(digest, parsed)
    return _PARSED.put(key, tree)


def _parse(xml: str | bytes | bytearray) -> _Parsed:
    warnings: list[str] = []
    text = _decode(bytes(xml) if isinstance(xml, bytearray) else xml, warnings)
    text = _clean(text, warnings)
    text = _isolate_document(text, warnings)
    root = _parse_root(text, warnings)
    nodes = _walk(root, warnings)
    rotation = _rotation(root, warnings)
    return _Parsed(rotation, tuple(nodes), _declared_size(root), tuple(warnings))
