"""Observation: one screenshot + UI XML, parsed and indexed, with its hashes.

Capture failures (including a dump with unparseable or empty content) are retried a bounded
number of times with backoff; a dropped connection gets its own reconnect budget; a device that
stays away raises DeviceOffline to the runner, which stops the session as resumable.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceOffline, HierarchyError, HierarchyParseError, ScreenshotError
from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.dhash import dhash_hex
from artemis_cli.perception.elements import index_elements, render_element_list
from artemis_cli.perception.foreground import foreground_app
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.png import png_size
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


T = TypeVar("T")

_EMPTY_XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"


def observe(
    device: Device,
    screen: tuple[int, int],
    coordinates: str,
    *,
    retries: int = 3,
    offline_retries: int = 6,
    backoff_s: float = 0.5,
    max_backoff_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
    on_problem: Callable[[str, str], None] | None = None,
) -> Observation:
    """Capture and parse the current screen.

    Hierarchy and screenshot failures are retried ``retries`` times; a dump that "succeeds" with
    unparseable or empty content is re-dumped the same way. When no usable hierarchy comes the
    observation carries the last parsed tree (else an empty one) and a problem note (the model
    still gets the screenshot). DeviceOffline is retried ``offline_retries`` times with backoff
    (a reconnect window of a few seconds, counted per failure across the whole observation) and
    re-raised when the device stays away.
    """
    problems: list[str] = []
    offline = {"left": offline_retries}

    def attempt(what: str, fn: Callable[[], T]) -> T:
        delay = backoff_s
        tries = 0
        while True:
            try:
                return fn()
            except (HierarchyError, ScreenshotError, DeviceOffline, HierarchyParseError) as exc:
                if on_problem:
                    on_problem(what, f"{type(exc).__name__}: {exc}")
                if isinstance(exc, DeviceOffline):
                    offline["left"] -= 1
                    if offline["left"] < 0:
                        raise
                else:
                    tries += 1
                    if tries > retries:
                        raise
                sleep(delay)
                delay = min(delay * 2, max_backoff_s)

    png = attempt("screenshot", device.screenshot)
    shot = png_size(png)
    if shot is not None and shot != screen and shot == (screen[1], screen[0]):
        # rotated since DeviceInfo was read: screencap, the dump's bounds and input taps all use
        # the rotated frame, so this observation does too (the model is told the size it sees)
        screen = shot
    last_empty: tuple[str, UITree] | None = None

    def dump_and_parse() -> tuple[str, UITree]:
        nonlocal last_empty
        xml = device.hierarchy()
        tree = parse_hierarchy(xml, screen_size=screen)
        if not tree.nodes:
            last_empty = (xml, tree)
            raise HierarchyError("the UI hierarchy dump holds no nodes")
        return xml, tree

    try:
        xml, tree = attempt("hierarchy", dump_and_parse)
    except HierarchyError as exc:
        if last_empty is not None:
            xml, tree = last_empty
            problems.append("UI hierarchy empty (no nodes in the dump); only the screenshot is current")
        else:
            problems.append(f"UI hierarchy unavailable ({exc}); only the screenshot is current")
            xml, tree = _EMPTY_XML, parse_hierarchy(_EMPTY_XML, screen_size=screen)
    except HierarchyParseError as exc:
        problems.append(f"UI hierarchy unreadable ({exc}); only the screenshot is current")
        xml, tree = _EMPTY_XML, parse_hierarchy(_EMPTY_XML, screen_size=screen)
    space = CoordinateSpace(screen[0], screen[1], coordinates)  # type: ignore[arg-type]

    def current_app() -> str | None:
        try:
            return device.current_app()
        except DeviceOffline:
            raise
        except Exception:
            return None

    hint = attempt("current_app", current_app)
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
