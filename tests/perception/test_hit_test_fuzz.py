"""Fuzz of the UI XML parser and hit testing together (SPEC §6).

Real dumps, generated trees (overlaps, zero-size / negative / inverted / malformed bounds) and
mutated real dumps (byte flips, truncation, entities, deep nesting, huge attributes).  Every
input either parses or raises HierarchyParseError / HierarchyError; every parsed tree hit-tests
at any point (inside, outside, negative, huge) to the target a brute-force reading of the
documented rule gives (:func:`expected_hit`: the topmost touch-catching window in drawing order,
then Android's dispatch — children offered the touch in reverse drawing order before their
parent, the first visible actionable node containing the point takes it, else the first labelled
one), whose bounds contain the point, with ``label_source`` "hit_test" or "none".

Example counts come from the hypothesis profile (``--long`` for many more).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from perception_dumps import dump_files

from artemis_cli.errors import HierarchyError, HierarchyParseError
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import HitIndex, hit_test
from artemis_cli.perception.modal import modal_in_front
from artemis_cli.perception.structure import TreeStructure, is_actionable, is_edit, own_label
from artemis_cli.perception.types import Target, UINode, UITree
from artemis_cli.perception.windows import Layer, order_windows

LABEL_SOURCES = ("index", "hit_test", "none")  # perception.types.LabelSource
FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_FILES = dump_files()
_RAW = [p.read_bytes() for p in _FILES]
_TREES = [parse_hierarchy(raw) for raw in _RAW]


# --- the property every hit test must satisfy -----------------------------------------------


def _scroll_only(node: UINode) -> bool:
    return node.scrollable and not (node.clickable or node.checkable or is_edit(node))


def expected_hit(tree: UITree, x: int, y: int) -> int | None:
    """The documented rule, by brute force: the topmost window (in drawing order) that holds a
    visible actionable or labelled node and contains the point; in it, a recursive dispatch
    (each node offers the touch to its children, topmost drawn first — ``drawing-order``, ties
    later in the file — then takes it itself): the first visible actionable node containing the
    point, a scroll-only one giving way to the first labelled node inside it; else the first
    labelled node; else nothing."""
    structure = TreeStructure.of(tree)
    nodes = tree.nodes
    children: dict[int, list[int]] = {}
    for i, p in enumerate(structure.parent):
        children.setdefault(p, []).append(i)

    def candidate(i: int) -> bool:
        return structure.visible(i) and (is_actionable(nodes[i]) or bool(own_label(nodes[i])))

    def first(i: int, takes: Any) -> int | None:
        """Dispatch below and at ``i``: the first node that ``takes`` the touch."""
        kids = sorted(children.get(i, []), key=lambda k: (nodes[k].drawing_order or 0, k), reverse=True)
        for k in kids:
            got = first(k, takes)
            if got is not None:
                return got
        return i if takes(i) else None

    def at_point(i: int) -> bool:
        return candidate(i) and nodes[i].bounds.contains(x, y)

    for window in reversed(order_windows(tree)):
        touchable = window.layer != Layer.DECOR and any(candidate(i) for i in range(window.root, window.end))
        if touchable and window.bounds.contains(x, y):
            break
    else:
        return None
    hit = first(window.root, lambda i: at_point(i) and is_actionable(nodes[i]))
    if hit is None:
        return first(window.root, lambda i: at_point(i) and not is_actionable(nodes[i]))
    if _scroll_only(nodes[hit]):
        inside = first(hit, lambda i: i != hit and at_point(i) and not is_actionable(nodes[i]))
        return hit if inside is None else inside
    return hit


def check_hit(tree: UITree, x: int, y: int) -> Target:
    target = hit_test(tree, x, y)
    assert target.label_source in LABEL_SOURCES
    assert target.label_source in ("hit_test", "none")  # never "index" from a coordinate
    assert target.element_index is None
    assert Target.from_dict(target.to_dict()) == target
    assert hit_test(tree, x, y) == target  # deterministic
    expected = expected_hit(tree, x, y)
    if target.label_source == "none":
        assert target == Target(label_source="none")
        assert expected is None, (x, y)
        return target
    assert expected is not None, (x, y)
    assert target.bounds is not None
    left, top, right, bottom = target.bounds
    assert left <= x < right and top <= y < bottom  # the bounds contain the point
    node = tree.nodes[expected]
    assert target.bounds == (node.bounds.left, node.bounds.top, node.bounds.right, node.bounds.bottom)
    assert target.class_name == node.class_name and target.resource_id == node.resource_id
    assert target.content_desc == node.content_desc and target.password == node.password
    if node.text or node.content_desc:
        assert target.text == node.text
    return target


def parse_or_documented_error(data: str | bytes) -> UITree | None:
    try:
        tree = parse_hierarchy(data)
    except (HierarchyParseError, HierarchyError) as exc:
        assert str(exc)
        return None
    assert isinstance(tree, UITree)
    for node in tree.nodes:
        b = node.bounds
        assert b.left <= b.right and b.top <= b.bottom
    assert tree.screen_width >= 0 and tree.screen_height >= 0
    assert tree.rotation in (0, 1, 2, 3)
    return tree


# --- real dumps ------------------------------------------------------------------------------


coords = st.one_of(
    st.integers(-50, 3300),
    st.integers(-(2**40), 2**40),
    st.sampled_from([0, -1, 1, 2**31 - 1, -(2**31), 10**9, -(10**9)]),
)


@st.composite
def point_near_a_node(draw: st.DrawFn, tree: UITree) -> tuple[int, int]:
    """Centre, corners, and one-off-the-edge points of a random node (bounds are half-open)."""
    if not tree.nodes:
        return draw(coords), draw(coords)
    b = draw(st.sampled_from(tree.nodes)).bounds
    xs = [b.left, b.left - 1, b.right, b.right - 1, b.center[0]]
    ys = [b.top, b.top - 1, b.bottom, b.bottom - 1, b.center[1]]
    return draw(st.sampled_from(xs)), draw(st.sampled_from(ys))


@FUZZ
@given(st.data())
def test_hit_test_on_real_dumps(data: st.DataObject) -> None:
    which = data.draw(st.integers(0, len(_TREES) - 1), label="dump")
    tree = _TREES[which]
    x, y = data.draw(
        st.one_of(
            point_near_a_node(tree),
            st.tuples(st.integers(0, max(0, tree.screen_width - 1)), st.integers(0, max(0, tree.screen_height - 1))),
            st.tuples(coords, coords),
        ),
        label="point",
    )
    check_hit(tree, x, y)


@pytest.mark.parametrize("path", _FILES, ids=[p.name[:3] for p in _FILES])
def test_every_labelled_actionable_node_of_a_real_dump_is_hit_somewhere(path: Any) -> None:
    """The centre of every indexed element hit-tests to a target (checked against the spec)."""
    tree = parse_hierarchy(path.read_bytes())
    for element in index_elements(tree):
        x, y = element.node.bounds.center
        check_hit(tree, x, y)
    check_hit(tree, -1, -1)
    check_hit(tree, tree.screen_width, tree.screen_height)


# --- generated trees -------------------------------------------------------------------------

_MALFORMED_BOUNDS = [
    "", "[", "[1,2][3", "[a,b][c,d]", "[1,2,3,4]", "1,2,3,4", "[-5,-5][-1,-1]", "[10,10][0,0]",
    "[0,0][0,0]", "[5,5][5,900]", "[1234567890,0][1,1]", "[ 1 , 2 ] [ 30 , 40 ]", "[٣,٣][٩,٩]",
    "[1,2][3,4]x", "[99999999999999999999,0][1,1]", "&amp;", "[0,0][1080,2400][0,0]",
]


SCREEN = (0, 0, 1080, 2400)


@st.composite
def bounds_attr(draw: st.DrawFn, parent: tuple[int, int, int, int]) -> tuple[str, tuple[int, int, int, int]]:
    """Mostly a box inside the parent (overlapping its siblings); sometimes anything at all."""
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return draw(st.sampled_from(_MALFORMED_BOUNDS)), parent
    if kind == 1:
        box = parent
    elif kind <= 5:
        pl, pt, pr, pb = parent
        left = draw(st.integers(pl, max(pl, pr - 1)))
        top = draw(st.integers(pt, max(pt, pb - 1)))
        box = (left, top, draw(st.integers(left, max(left, pr))), draw(st.integers(top, max(top, pb))))
    else:
        left, top = draw(st.integers(-200, 1200)), draw(st.integers(-200, 2500))
        width = draw(st.sampled_from([0, 1, -3]) | st.integers(-50, 1300))
        height = draw(st.sampled_from([0, 1, -3]) | st.integers(-50, 2600))
        box = (left, top, left + width, top + height)
    return f"[{box[0]},{box[1]}][{box[2]},{box[3]}]", box


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


@st.composite
def node_xml(draw: st.DrawFn, depth: int, parent: tuple[int, int, int, int] = SCREEN) -> str:
    bounds, box = draw(bounds_attr(parent))
    attrs = {
        "text": draw(st.sampled_from(["", "", "OK", "Wi-Fi", "名前", "a & b", " "])),
        "content-desc": draw(st.sampled_from(["", "", "Back", "More options"])),
        "resource-id": draw(st.sampled_from(["", "com.x:id/row", "android:id/button1",
                                             "com.android.systemui:id/navigation_bar_frame",
                                             "com.android.systemui:id/rounded_corners_top"])),
        "package": draw(st.sampled_from(["", "com.x", "com.x", "com.android.systemui",
                                         "com.google.android.inputmethod.latin", "com.other.overlay"])),
        "class": draw(st.sampled_from(["android.widget.FrameLayout", "android.widget.Button",
                                       "android.widget.EditText", "android.widget.TextView",
                                       "androidx.recyclerview.widget.RecyclerView", ""])),
        "clickable": draw(st.sampled_from(["true", "false", "false", "TRUE", "yes"])),
        "scrollable": draw(st.sampled_from(["false", "false", "true"])),
        "focusable": draw(st.sampled_from(["false", "true"])),
        "password": draw(st.sampled_from(["false", "true"])),
        "bounds": bounds,
    }
    display = draw(st.sampled_from([None, None, None, "0", "1", "x"]))
    if display is not None:
        attrs["display-id"] = display
    visible = draw(st.sampled_from([None, None, "true", "false", "maybe"]))
    if visible is not None:
        attrs["visible-to-user"] = visible
    head = "<node " + " ".join(f'{k}="{_attr(v)}"' for k, v in attrs.items())
    if depth <= 0:
        return head + "/>"
    children = draw(st.lists(node_xml(depth - 1, box), max_size=3))
    return head + ">" + "".join(children) + "</node>" if children else head + "/>"


@st.composite
def generated_tree(draw: st.DrawFn) -> str:
    windows = draw(st.lists(node_xml(2), min_size=0, max_size=5))
    rotation = draw(st.sampled_from(["0", "1", "3", "7", "x", "-1"]))
    return f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="{rotation}">{"".join(windows)}</hierarchy>'


@FUZZ
@given(generated_tree(), st.data())
@example(  # zero-size and inverted boxes over a clickable window: never the hit
    '<hierarchy rotation="0"><node clickable="true" bounds="[0,0][100,100]">'
    '<node text="empty" clickable="true" bounds="[10,10][10,10]"/>'
    '<node text="inverted" clickable="true" bounds="[50,50][20,20]"/></node></hierarchy>',
    None,
).via("zero-size bounds")
def test_hit_test_on_generated_trees(xml: str, data: st.DataObject | None) -> None:
    tree = parse_hierarchy(xml)  # well-formed XML: always parses, odd attributes become warnings
    if data is None:
        for x, y in [(10, 10), (30, 30), (50, 50), (99, 99), (100, 100), (-1, 5)]:
            target = check_hit(tree, x, y)
            assert target.text not in ("empty", "inverted")
        return
    for _ in range(data.draw(st.integers(1, 4), label="points")):
        x, y = data.draw(st.one_of(point_near_a_node(tree), st.tuples(coords, coords)), label="point")
        check_hit(tree, x, y)


def check_tap_points(tree: UITree) -> None:
    """Every listed point lies on its element and, by the brute-force rule, reaches it (controls),
    a node inside it (anything that scrolls) or is text kept for reading; every control left out
    is reached by no point of a 12 x 12 grid over it, except the keyboard's keys, which are
    never listed (the head line says the keyboard is shown) though they take touches, and what
    is behind the modal window in front (which takes every touch: none of its windows' nodes is
    listed)."""
    position = {node.path: i for i, node in enumerate(tree.nodes)}
    structure = TreeStructure.of(tree)
    index = HitIndex.of(tree)
    modal = modal_in_front(index)
    behind = {i for i, w in index.window_of.items() if modal is not None and w < modal.position}
    listed = set()
    for element in index_elements(tree):
        i = position[element.node.path]
        listed.add(i)
        assert i not in behind, (element, modal)
        b = element.node.bounds
        x, y = element.center
        assert b.contains(x, y) and 0 <= x < tree.screen_width and 0 <= y < tree.screen_height
        hit = expected_hit(tree, x, y)
        if element.node.scrollable:
            assert hit is not None and i <= hit < structure.subtree_end[i]
        elif is_actionable(element.node):
            assert hit == i, (element, hit)
    windows = order_windows(tree)
    keys = {i for w in windows if w.layer == Layer.IME for i in range(w.root, w.end)}
    assert not keys & listed, "a keyboard key was listed"
    shown = {i for w in windows if w.layer != Layer.IME for i in range(w.root, w.end)}
    for i in shown - listed - behind:
        node = tree.nodes[i]
        if not (is_actionable(node) and structure.visible(i)) or node.scrollable:
            continue
        b = node.bounds
        for gx in range(12):
            for gy in range(12):
                x = b.left + (b.width * (2 * gx + 1)) // 24
                y = b.top + (b.height * (2 * gy + 1)) // 24
                assert expected_hit(tree, x, y) != i, ("left out but reachable", node, (x, y))


@FUZZ
@given(generated_tree())
@example(  # a control partly outside its own (small, topmost) window: tapped inside the window
    '<hierarchy rotation="0"><node clickable="true" bounds="[0,0][1080,2400]"/>'
    '<node clickable="true" bounds="[0,0][4,9]"><node clickable="true" bounds="">'
    '<node clickable="true" bounds="[3,3][9,9]"/></node></node></hierarchy>'
).via("found by --long")
def test_tap_points_on_generated_trees(xml: str) -> None:
    check_tap_points(parse_hierarchy(xml))


@pytest.mark.parametrize("path", _FILES, ids=[p.name[:3] for p in _FILES])
def test_tap_points_on_real_dumps(path: Any) -> None:
    check_tap_points(parse_hierarchy(path.read_bytes()))


@FUZZ
@given(st.sampled_from(_MALFORMED_BOUNDS), coords, coords)
def test_malformed_bounds_never_produce_a_hit_outside_them(raw: str, x: int, y: int) -> None:
    xml = f'<hierarchy><node clickable="true" text="t" bounds="{_attr(raw)}"/></hierarchy>'
    tree = parse_hierarchy(xml)
    (node,) = tree.nodes
    target = check_hit(tree, x, y)
    if target.label_source == "hit_test":
        assert node.bounds.contains(x, y)


# --- mutated real dumps ----------------------------------------------------------------------

_ENTITIES = [b"&amp;", b"&lt;", b"&#0;", b"&#xFFFF;", b"&#xD800;", b"&#99999999999;", b"&#x110000;",
             b"&undefined;", b"&", b"&#;", b"&#x;", b"&#1114111;", b"&#x1F600;", b"&nbsp;"]


def _mutate(raw: bytes, rng: random.Random, mutations: int) -> bytes:
    data = bytearray(raw)
    for _ in range(mutations):
        if not data:
            data = bytearray(b"<")
        pos = rng.randrange(len(data))
        op = rng.randrange(7)
        if op == 0:  # byte flip
            data[pos] ^= 1 << rng.randrange(8)
        elif op == 1:  # random byte
            data[pos] = rng.randrange(256)
        elif op == 2:  # truncation
            del data[pos:]
        elif op == 3:  # inserted entity / character reference
            data[pos:pos] = rng.choice(_ENTITIES)
        elif op == 4:  # deleted run
            del data[pos : pos + rng.randrange(1, 64)]
        elif op == 5:  # huge attribute value
            at = raw.find(b'text="')
            if at >= 0:
                data = bytearray(raw[: at + 6] + b"W" * rng.choice([10_000, 200_000]) + raw[at + 6 :])
        else:  # duplicated slice (repeated / unbalanced tags)
            end = min(len(data), pos + rng.randrange(1, 400))
            data[pos:pos] = data[pos:end]
    return bytes(data)


@FUZZ
@given(st.integers(0, len(_RAW) - 1), st.integers(0, 2**32 - 1), st.integers(1, 6), st.data())
def test_mutated_real_dumps_parse_or_raise_and_hit_test(
    which: int, seed: int, mutations: int, data: st.DataObject
) -> None:
    tree = parse_or_documented_error(_mutate(_RAW[which], random.Random(seed), mutations))
    if tree is None:
        return
    index_elements(tree)
    for _ in range(3):
        x, y = data.draw(st.one_of(point_near_a_node(tree), st.tuples(coords, coords)), label="point")
        check_hit(tree, x, y)


def _nested(depth: int, leaf: str = '<node text="deep" clickable="true" bounds="[1,1][2,2]"/>') -> str:
    opening = '<node clickable="false" bounds="[0,0][100,100]">'
    return f'<hierarchy rotation="0">{opening * depth}{leaf}{"</node>" * depth}</hierarchy>'


@FUZZ
@given(st.integers(1, 300), st.floats(0.0, 1.0))
def test_nesting_parses_or_raises_even_when_cut(depth: int, cut: float) -> None:
    xml = _nested(depth)
    tree = parse_or_documented_error(xml[: int(len(xml) * cut)])
    if tree is None:
        return
    index_elements(tree)
    check_hit(tree, 1, 1)
    check_hit(tree, 50, 50)


@pytest.mark.parametrize("depth", [255, 256, 257, 2047, 2048, 2049, 12_000])
def test_very_deep_nesting_parses_and_hit_tests(depth: int) -> None:
    """libxml2 stops at depth 2048 even with huge_tree: the parser keeps what it recovered."""
    tree = parse_or_documented_error(_nested(depth))
    assert tree is not None and 0 < len(tree.nodes) <= depth + 1
    index_elements(tree)
    check_hit(tree, 50, 50)
    if len(tree.nodes) == depth + 1:
        assert not tree.warnings and check_hit(tree, 1, 1).text == "deep"
    else:
        assert any("malformed XML" in w for w in tree.warnings)


def test_entity_expansion_bomb_is_not_expanded() -> None:
    """Billion laughs: entities are never expanded, so this parses small or is rejected."""
    lol = '<!ENTITY a "lollollollollollollollollollol">' + "".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9)
    )
    xml = f'<?xml version="1.0"?><!DOCTYPE hierarchy [{lol}]><hierarchy><node text="&j;" bounds="[0,0][9,9]"/></hierarchy>'
    tree = parse_or_documented_error(xml)
    if tree is not None:
        assert all(len(n.text) < 1000 for n in tree.nodes)
        check_hit(tree, 1, 1)


def test_huge_attribute_values_are_kept_and_hit() -> None:
    big = "W" * 2_000_000
    tree = parse_hierarchy(f'<hierarchy><node text="{big}" clickable="true" bounds="[0,0][10,10]"/></hierarchy>')
    assert check_hit(tree, 5, 5).text == big
