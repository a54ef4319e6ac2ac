"""Serialise windows into exactly the XML that ``uiautomator dump`` and uiautomator2 write.

Two shapes, both from the same widget trees the renderer draws:

* :func:`dump` — ``uiautomator dump`` (the shell command): one line, the classic 17 attributes.
* :func:`dump_u2` — uiautomator2's ``dumpWindowHierarchy``: one top-level ``<node>`` per window
  (index 0, as in the real 041/042 dumps), pretty-printed with CRLF line ends and two-space
  indents like Android's KXmlSerializer, and the attributes its dumper adds: ``visible-to-user``,
  ``drawing-order``, ``hint`` and ``display-id``.

uiautomator2 collects the windows in a set, so the order of the top-level nodes is not the order
the screen draws them in: :func:`window_order` gives the sim's (seeded) order for one dump.
"""

from __future__ import annotations

import random

from artemis_cli.sim.widgets import Widget, Window

HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
U2_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\">"
EOL = "\r\n"

_ESC = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\n": "&#10;"})
# KXmlSerializer in a double-quoted attribute: ' stays, control whitespace becomes a reference.
_U2_ESC = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                         "\t": "&#9;"})


def _esc(s: str) -> str:
    return s.translate(_ESC)


def _b(v: bool) -> str:
    return "true" if v else "false"


def _attrs(w: Widget, index: int, package: str, esc: dict[int, str]) -> str:
    return (f'index="{index}" text="{w.text.translate(esc)}" resource-id="{w.rid.translate(esc)}" '
            f'class="{w.cls}" package="{package}" content-desc="{w.desc.translate(esc)}" '
            f'checkable="{_b(w.checkable)}" checked="{_b(w.checked)}" clickable="{_b(w.clickable)}" '
            f'enabled="{_b(w.enabled)}" focusable="{_b(w.focusable)}" focused="{_b(w.focused)}" '
            f'scrollable="{_b(w.scrollable)}" long-clickable="{_b(w.long_clickable)}" '
            f'password="{_b(w.password)}" selected="{_b(w.selected)}"')


def _bounds(w: Widget) -> str:
    b = w.bounds
    return f'bounds="[{b[0]},{b[1]}][{b[2]},{b[3]}]"'


def _node(w: Widget, index: int, package: str, out: list[str]) -> None:
    out.append(f"<node {_attrs(w, index, package, _ESC)} {_bounds(w)}")
    if not w.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(w.children):
        _node(child, i, package, out)
    out.append("</node>")


def dump(windows: list[Window]) -> str:
    """``uiautomator dump``'s XML of ``windows`` (the shell command writes the active one only)."""
    out: list[str] = [HEADER]
    for win in windows:
        _node(win.root, 0, win.package, out)
    out.append("</hierarchy>")
    return "".join(out)


def _u2_node(w: Widget, index: int, drawing_order: int, package: str, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    out.append(f'{EOL}{pad}<node {_attrs(w, index, package, _U2_ESC)} visible-to-user="true" {_bounds(w)} '
               f'drawing-order="{drawing_order}" hint="{w.hint.translate(_U2_ESC)}" display-id="0"')
    if not w.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(w.children):
        _u2_node(child, i, i + 1, package, depth + 1, out)
    out.append(f"{EOL}{pad}</node>")


def dump_u2(windows: list[Window]) -> str:
    """uiautomator2's XML: each window a top-level node, in the order given."""
    out: list[str] = [U2_HEADER]
    for win in windows:
        _u2_node(win.root, 0, 0, win.package, 1, out)
    out.append(f"{EOL}</hierarchy>")
    return "".join(out)


def window_order(count: int, seed: int, dump_number: int) -> list[int]:
    """The order (indices into the drawing-order list) in which one uiautomator2 dump lists
    ``count`` windows: a shuffle seeded by the phone's seed and the dump's number, so the same
    seed and the same sequence of dumps give the same orders."""
    order = list(range(count))
    random.Random(f"artemis-sim-windows|{seed}|{dump_number}").shuffle(order)
    return order
