"""Perception: UI XML parsing, element indexing, hit testing, dHash, action markers."""

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
