"""Perception: UI XML parsing, element indexing, hit testing, dHash, action markers.

The names below load on first use: ``perception.types`` (records the DataEngine reads) must not
pull numpy, PIL and lxml into every command's start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.lazy import lazy_names

if TYPE_CHECKING:
    from artemis_cli.perception.coords import CoordinateSpace
    from artemis_cli.perception.dhash import dhash_hex, hamming
    from artemis_cli.perception.elements import (
        ParsedElement,
        index_elements,
        parse_element_lines,
        render_element_list,
    )
    from artemis_cli.perception.foreground import foreground_app
    from artemis_cli.perception.hierarchy import parse_hierarchy
    from artemis_cli.perception.hittest import hit_test, target_for_element
    from artemis_cli.perception.marker import draw_action_marker

_WHERE = {
    "CoordinateSpace": "coords", "dhash_hex": "dhash", "hamming": "dhash",
    "ParsedElement": "elements", "index_elements": "elements", "parse_element_lines": "elements",
    "render_element_list": "elements", "foreground_app": "foreground", "parse_hierarchy": "hierarchy",
    "hit_test": "hittest", "target_for_element": "hittest", "draw_action_marker": "marker",
}

__all__ = [
    "CoordinateSpace",
    "ParsedElement",
    "dhash_hex",
    "draw_action_marker",
    "foreground_app",
    "hamming",
    "hit_test",
    "index_elements",
    "parse_element_lines",
    "parse_hierarchy",
    "render_element_list",
    "target_for_element",
]


__getattr__ = lazy_names(__name__, _WHERE)
