"""Helpers for the simulated-phone tests: find nodes in a uiautomator-format dump (xml.etree only)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from artemis_cli.sim import SimPhone

Box = tuple[int, int, int, int]


def bounds(node: ET.Element) -> Box:
    l_, t, r, b = map(int, re.findall(r"-?\d+", node.get("bounds", "")))
    return l_, t, r, b


def nodes(phone: SimPhone, **attrs: str) -> list[ET.Element]:
    root = ET.fromstring(phone.hierarchy())
    want = {k.replace("_", "-"): v for k, v in attrs.items()}
    return [n for n in root.iter("node") if all(n.get(k) == v for k, v in want.items())]


def node(phone: SimPhone, **attrs: str) -> ET.Element:
    found = nodes(phone, **attrs)
    assert found, f"no node with {attrs}"
    return found[0]


def center(n: ET.Element) -> tuple[int, int]:
    l_, t, r, b = bounds(n)
    return (l_ + r) // 2, (t + b) // 2


def tap(phone: SimPhone, **attrs: str) -> None:
    phone.tap(*center(node(phone, **attrs)))


def tap_reachable(phone: SimPhone, **attrs: str) -> None:
    """Tap the node where a tap reaches it: its centre, else the first point of a grid over it
    that the phone routes to it (a row's button can lie under a FAB floating over the list, and
    the FAB, drawn on top, takes those points)."""
    n = node(phone, **attrs)
    l_, t, r, b = bounds(n)
    points = [center(n)] + [(l_ + (r - l_) * (2 * i + 1) // 16, t + (b - t) * (2 * j + 1) // 16)
                            for j in range(8) for i in range(8)]
    for x, y in points:
        w = phone.widget_at(x, y)
        if w is not None and w.bounds == (l_, t, r, b) and w.rid == n.get("resource-id"):
            phone.tap(x, y)
            return
    raise AssertionError(f"no point of {attrs} reaches it")


def login(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    tap(phone, resource_id="com.artemis.shop:id/username")
    phone.type_text("demo")
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text("artemis123")
    tap(phone, text="Log in")


