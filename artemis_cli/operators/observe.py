"""Observation: one screenshot + UI XML, parsed and indexed, with its hashes.

Capture failures are retried a bounded number of times with backoff; a device that stays away
raises DeviceOffline to the runner, which stops the session as resumable.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceOffline, HierarchyError, HierarchyParseError, ScreenshotError
from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.dhash import dhash_hex
from artemis_cli.perception.elements import index_elements, render_element_list
from artemis_cli.perception.foreground import foreground_app
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.types import Element, UITree


@dataclass
class Observation:
    png: bytes
    xml: str
    tree: UITree
    elements: list[Element]
    dhash: str
    foreground: str | None
    space: CoordinateSpace
    captured_at: float  # monotonic seconds
    problems: list[str] = field(default_factory=list)
    _element_list: str | None = None

    @property
    def xml_sha(self) -> str:
        return hashlib.sha256(self.xml.encode("utf-8")).hexdigest()

    @property
    def element_list(self) -> str:
        if self._element_list is None:
            self._element_list = render_element_list(self.elements, self.space)
        return self._element_list

    def focused_element(self) -> Element | None:
        return next((e for e in self.elements if e.node.focused), None)


_EMPTY_XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"


def observe(
    device: Device,
    screen: tuple[int, int],
    coordinates: str,
    *,
    retries: int = 3,
    backoff_s: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
    on_problem: Callable[[str, str], None] | None = None,
) -> Observation:
    """Capture and parse the current screen.

    Hierarchy and screenshot failures are retried; when the hierarchy still cannot be had the
    observation carries an empty tree and a problem note (the model still gets the screenshot).
    DeviceOffline is retried with backoff and re-raised when the device stays away.
    """
    problems: list[str] = []

    def attempt(what: str, fn: Callable[[], object]) -> object:
        delay = backoff_s
        last: Exception | None = None
        for i in range(retries + 1):
            try:
                return fn()
            except (HierarchyError, ScreenshotError, DeviceOffline) as exc:
                last = exc
                if on_problem:
                    on_problem(what, f"{type(exc).__name__}: {exc}")
                if i < retries:
                    sleep(delay)
                    delay = min(delay * 2, 8.0)
        assert last is not None
        raise last

    png = attempt("screenshot", device.screenshot)
    assert isinstance(png, bytes)
    try:
        xml = attempt("hierarchy", device.hierarchy)
        assert isinstance(xml, str)
    except HierarchyError as exc:
        problems.append(f"UI hierarchy unavailable ({exc}); only the screenshot is current")
        xml = _EMPTY_XML
    try:
        tree = parse_hierarchy(xml, screen_size=screen)
    except HierarchyParseError as exc:
        problems.append(f"UI hierarchy unreadable ({exc}); only the screenshot is current")
        tree = parse_hierarchy(_EMPTY_XML, screen_size=screen)
    space = CoordinateSpace(screen[0], screen[1], coordinates)  # type: ignore[arg-type]
    try:
        hint = device.current_app()
    except DeviceOffline:
        raise
    except Exception:
        hint = None
    return Observation(
        png=png,
        xml=xml,
        tree=tree,
        elements=index_elements(tree),
        dhash=dhash_hex(png),
        foreground=foreground_app(tree, hint),
        space=space,
        captured_at=time.monotonic(),
        problems=problems,
    )
