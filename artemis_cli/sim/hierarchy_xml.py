"""Serialise windows into exactly the XML that ``uiautomator dump`` writes."""

from __future__ import annotations

from artemis_cli.sim.widgets import Widget, Window

HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"

_ESC = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\n": "&#10;"})


def _esc(s: str) -> str:
    return s.translate(_ESC)


def _b(v: bool) -> str:
    return "true" if v else "false"


def _node(w: Widget, index: int, package: str, out: list[str]) -> None:
    b = w.bounds
    out.append(
        f'<node index="{index}" text="{_esc(w.text)}" resource-id="{_esc(w.rid)}" class="{w.cls}" '
        f'package="{package}" content-desc="{_esc(w.desc)}" checkable="{_b(w.checkable)}" '
        f'checked="{_b(w.checked)}" clickable="{_b(w.clickable)}" enabled="{_b(w.enabled)}" '
        f'focusable="{_b(w.focusable)}" focused="{_b(w.focused)}" scrollable="{_b(w.scrollable)}" '
        f'long-clickable="{_b(w.long_clickable)}" password="{_b(w.password)}" '
        f'selected="{_b(w.selected)}" bounds="[{b[0]},{b[1]}][{b[2]},{b[3]}]"'
    )
    if not w.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(w.children):
        _node(child, i, package, out)
    out.append("</node>")


def dump(windows: list[Window]) -> str:
    out: list[str] = [HEADER]
    for win in windows:
        _node(win.root, 0, win.package, out)
    out.append("</hierarchy>")
    return "".join(out)
