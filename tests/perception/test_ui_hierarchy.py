from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perception_dumps import GAMES, dump, dump_files, expected_node_counts

from artemis_cli.errors import HierarchyParseError
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.types import Bounds

NODE = (
    '<node index="0" text="{text}" resource-id="" class="android.widget.TextView" package="p" '
    'content-desc="" clickable="false" enabled="true" bounds="{bounds}" />'
)


def _doc(inner: str, rotation: str = "0") -> str:
    return f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"{rotation}\">{inner}</hierarchy>"


# --- real dumps ---------------------------------------------------------------------------


def test_fixture_table_lists_every_dump() -> None:
    counts = expected_node_counts()
    assert sorted(counts) == [p.name for p in dump_files()]
    assert len(counts) == 42


@pytest.mark.parametrize("path", dump_files(), ids=lambda p: p.name[:3])
def test_real_dump_parses_with_exact_node_count(path) -> None:
    tree = parse_hierarchy(path.read_bytes())
    assert len(tree) == expected_node_counts()[path.name]
    assert tree.warnings == ()
    assert tree.screen_width > 0 and tree.screen_height > 0
    for node in tree.nodes:
        b = node.bounds
        assert b.left <= b.right and b.top <= b.bottom, (node.path, b)
        assert node.depth == node.path.count(".")
    # pre-order paths are unique
    assert len({n.path for n in tree.nodes}) == len(tree)
    elements = index_elements(tree)
    if path.name not in GAMES:
        assert elements, path.name
    assert [e.index for e in elements] == list(range(len(elements)))


def test_real_dump_as_text_equals_as_bytes() -> None:
    raw = dump("008")
    assert parse_hierarchy(raw) == parse_hierarchy(raw.decode("utf-8"))


def test_screen_size_from_top_level_bounds_and_hint() -> None:
    tree = parse_hierarchy(dump("021"))  # three top-level windows: app, nav bar, status bar
    assert (tree.screen_width, tree.screen_height) == (480, 640)
    assert [n.path for n in tree.nodes if n.depth == 0] == ["0", "1", "2"]
    hinted = parse_hierarchy(dump("019"), screen_size=(1080, 1920))
    assert (hinted.screen_width, hinted.screen_height) == (1080, 1920)
    floating = parse_hierarchy(dump("019"))  # window at 28,703: max right/bottom
    assert (floating.screen_width, floating.screen_height) == (1052, 1217)


def test_rotation_is_kept_and_bounds_are_not_swapped() -> None:
    landscape = parse_hierarchy(dump("031"))
    assert landscape.rotation == 1
    assert (landscape.screen_width, landscape.screen_height) == (2780, 1264)
    portrait = parse_hierarchy(dump("022"))
    assert portrait.rotation == 1
    assert (portrait.screen_width, portrait.screen_height) == (1080, 1920)


def test_attributes_entities_and_newlines() -> None:
    tree = parse_hierarchy(dump("036"))
    assert any("\n" in n.content_desc for n in tree.nodes)
    icons = parse_hierarchy(dump("014"))
    assert any(n.text == chr(983360) or chr(983360) in n.text for n in icons.nodes) or any(
        ord(c) > 0xFFFF for n in icons.nodes for c in n.text
    )
    quoted = parse_hierarchy(dump("013"))
    assert any(n.text == 'Say "Ok Google"' for n in quoted.nodes)
    naf = parse_hierarchy(dump("027"))  # IDE-reformatted, NAF="true"
    assert naf.nodes[1].naf and naf.nodes[1].resource_id.endswith("left_button")
    uia2 = parse_hierarchy(dump("021"))
    assert all(n.visible_to_user is True for n in uia2.nodes)
    classic = parse_hierarchy(dump("008"))
    assert all(n.visible_to_user is None for n in classic.nodes)
    password = parse_hierarchy(dump("017"))
    assert [n.text for n in password.nodes if n.password] == ["Пароль"]


def test_paths_are_dotted_child_positions() -> None:
    xml = _doc(
        '<node bounds="[0,0][10,10]"><node bounds="[0,0][5,5]"/><node bounds="[5,5][10,10]">'
        '<node bounds="[6,6][7,7]"/></node></node><node bounds="[0,0][10,2]"/>'
    )
    tree = parse_hierarchy(xml)
    assert [(n.path, n.depth) for n in tree.nodes] == [
        ("0", 0),
        ("0.0", 1),
        ("0.1", 1),
        ("0.1.0", 2),
        ("1", 0),
    ]


# --- oddities -----------------------------------------------------------------------------


def test_empty_hierarchy_is_an_empty_tree() -> None:
    for xml in ("<hierarchy/>", '<hierarchy rotation="0"></hierarchy>', _doc("")):
        tree = parse_hierarchy(xml)
        assert len(tree) == 0 and (tree.screen_width, tree.screen_height) == (0, 0)
        assert index_elements(tree) == []


def test_bom_missing_declaration_and_trailing_garbage() -> None:
    body = '<hierarchy rotation="0">' + NODE.format(text="Hi", bounds="[0,0][100,50]") + "</hierarchy>"
    for raw in (
        b"\xef\xbb\xbf" + _doc(NODE.format(text="Hi", bounds="[0,0][100,50]")).encode(),
        body,
        body + "\nUI hierchary dumped to: /dev/tty\n",
        "\ufeff" + body,
        ("\ufeff" + body).encode("utf-16"),
    ):
        tree = parse_hierarchy(raw)
        assert [n.text for n in tree.nodes] == ["Hi"]
    assert any("after </hierarchy>" in w for w in parse_hierarchy(body + "garbage<<").warnings)


def test_invalid_xml_characters_are_stripped() -> None:
    xml = _doc(NODE.format(text="a\x00b\x1bc&#1;d&#x1F;e\ufffe", bounds="[0,0][10,10]"))
    tree = parse_hierarchy(xml)
    assert tree.nodes[0].text == "abcde"
    assert tree.warnings


def test_malformed_bounds_become_zero_with_warning() -> None:
    xml = _doc(
        NODE.format(text="bad", bounds="[0,0][abc]")
        + NODE.format(text="inverted", bounds="[100,100][50,50]")
        + NODE.format(text="huge", bounds="[0,0][" + "9" * 5000 + ",1]")
    )
    tree = parse_hierarchy(xml)
    assert tree.nodes[0].bounds == Bounds(0, 0, 0, 0)
    assert tree.nodes[1].bounds.width == 0 and tree.nodes[1].bounds.height == 0
    assert tree.nodes[2].bounds == Bounds(0, 0, 0, 0)
    assert len(tree.warnings) == 3


def test_deep_tree_does_not_recurse() -> None:
    # Deeper than Python's recursion limit; libxml2 itself caps nesting at 2048 (huge_tree mode).
    depth = 2000
    xml = "<hierarchy>" + '<node bounds="[0,0][10,10]">' * depth + "</node>" * depth + "</hierarchy>"
    tree = parse_hierarchy(xml)
    assert len(tree) == depth
    assert tree.nodes[-1].depth == depth - 1
    index_elements(tree)


def test_deeper_than_libxml2_limit_keeps_what_it_can() -> None:
    depth = 3000
    xml = "<hierarchy>" + '<node bounds="[0,0][10,10]">' * depth + "</node>" * depth + "</hierarchy>"
    tree = parse_hierarchy(xml)
    assert len(tree) >= 2000
    assert tree.warnings


def test_truncated_dump_is_recovered_with_warning() -> None:
    raw = dump("008").decode()
    tree = parse_hierarchy(raw[: len(raw) // 2])
    assert 0 < len(tree) < 66
    assert any("malformed XML" in w for w in tree.warnings)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "hello world",
        "ERROR: null root node returned by UiTestAutomationBridge.",
        "<html><b>x</b></html>",
        b"\x89PNG\r\n\x1a\n\x00\x00",
        '{"json": true}',
        "<<<>>>",
    ],
)
def test_not_a_hierarchy_raises_parse_error(bad) -> None:
    with pytest.raises(HierarchyParseError) as info:
        parse_hierarchy(bad)
    assert str(info.value)


def test_non_text_input_raises_parse_error() -> None:
    with pytest.raises(HierarchyParseError):
        parse_hierarchy(None)  # type: ignore[arg-type]


def test_external_entities_are_not_resolved(tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE h [<!ENTITY x SYSTEM "file://{secret}">]>'
        '<hierarchy><node text="&x;" bounds="[0,0][1,1]"/></hierarchy>'
    )
    try:
        tree = parse_hierarchy(xml)
    except HierarchyParseError:
        return
    assert all("TOPSECRET" not in n.text for n in tree.nodes)


# --- fuzz ---------------------------------------------------------------------------------

_FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
_XMLISH = st.lists(
    st.sampled_from(
        [
            *list('<>/="[],&#;! ?x01-9'),
            "<node ",
            "<hierarchy>",
            "</node>",
            "bounds=",
            "text=",
            "\x00",
            "é",
            "&#0;",
            "]]>",
            "/>",
        ]
    ),
    max_size=60,
).map("".join)


def _parse_or_parse_error(data: str | bytes) -> None:
    try:
        tree = parse_hierarchy(data)
    except HierarchyParseError:
        return
    for node in tree.nodes:
        assert node.bounds.left <= node.bounds.right and node.bounds.top <= node.bounds.bottom
    index_elements(tree)


@_FUZZ
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(data: bytes) -> None:
    _parse_or_parse_error(data)


@_FUZZ
@given(_XMLISH)
def test_fuzz_xmlish_text(text: str) -> None:
    _parse_or_parse_error(text)
    _parse_or_parse_error("<hierarchy>" + text)


_REAL = [p.read_text(encoding="utf-8") for p in dump_files()]


@_FUZZ
@given(st.integers(0, len(_REAL) - 1), st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_fuzz_mutated_real_dumps(which: int, seed: int, mutations: int) -> None:
    rng = random.Random(seed)
    chars = list(_REAL[which])
    for _ in range(mutations):
        if not chars:
            chars = ["<"]
        pos = rng.randrange(len(chars))
        op = rng.randrange(4)
        if op == 0:
            del chars[pos : pos + rng.randrange(1, 50)]
        elif op == 1:
            chars.insert(
                pos, rng.choice(['"', "<", ">", "&", "\x00", "]", "[", "'", "/>", "</node>", "&#xD800;"])
            )
        elif op == 2:
            chars[pos] = chr(rng.randrange(0, 0x3000))
        else:
            cut = rng.randrange(len(chars))
            chars = chars[:cut]
    _parse_or_parse_error("".join(chars))


def test_an_unchanged_dump_is_parsed_once_and_keyed_by_what_changes_the_tree() -> None:
    """Parsed trees are remembered by the dump's digest and the screen size hint: the same dump
    gives the same immutable tree object; another size, other bytes or a changed dump parse anew."""
    xml = ('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0"><node index="0" text="A" '
           'class="android.widget.FrameLayout" package="p" bounds="[0,0][100,200]" /></hierarchy>')
    tree = parse_hierarchy(xml, screen_size=(100, 200))
    assert parse_hierarchy(xml, screen_size=(100, 200)) is tree
    other = parse_hierarchy(xml, screen_size=(200, 100))
    assert other is not tree and (other.screen_width, other.screen_height) == (200, 100)
    assert parse_hierarchy(xml).screen_width == 100
    changed = parse_hierarchy(xml.replace('text="A"', 'text="B"'), screen_size=(100, 200))
    assert changed.nodes[0].text == "B" and tree.nodes[0].text == "A"
    assert parse_hierarchy(xml.encode("utf-8"), screen_size=(100, 200)) == tree
