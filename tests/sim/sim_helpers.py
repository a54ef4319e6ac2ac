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


def login(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    tap(phone, resource_id="com.artemis.shop:id/username")
    phone.type_text("demo")
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text("artemis123")
    tap(phone, text="Log in")


