"""Appium page source and dumps in other encodings (issue 12, item 6): parsed right or refused
clearly, never read as an empty screen, never silently turned into U+FFFD."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artemis_cli.errors import HierarchyParseError
from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import index_elements, render_element_list
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import hit_test

APPIUM = Path(__file__).parent / "data" / "appium-page-source.xml"


# --- Appium page source ----------------------------------------------------------------------


def test_appium_page_source_parses_like_a_dump() -> None:
    tree = parse_hierarchy(APPIUM.read_bytes())
    assert len(tree) == 10 and tree.warnings == ()
    assert (tree.screen_width, tree.screen_height) == (1080, 2400)  # <hierarchy width= height=>
    assert [n.path for n in tree.nodes if n.depth == 0] == ["0"]
    classes = [n.class_name for n in tree.nodes]
    assert classes[3] == "androidx.recyclerview.widget.RecyclerView"
    assert classes[7] == "android.widget.LinearLayout"  # no class attribute: taken from the tag
    switch = tree.nodes[-1]
    assert switch.content_desc == "Dark theme" and switch.visible_to_user is False  # displayed="false"
    lines = render_element_list(index_elements(tree), CoordinateSpace(1080, 2400)).splitlines()
    assert lines == [
        '[0] TextView "Settings" id=homepage_title @(540,265)',
        "[1] RecyclerView id=recycler_view {scroll} @(540,1400)",
        '[2] LinearLayout "Network & internet · Mobile, Wi‑Fi, hotspot" {click} @(540,510)',
        '[3] LinearLayout "Connected devices" {click} @(540,730)',
    ]
    assert hit_test(tree, 540, 700).text == "Connected devices"


def test_appium_fragment_without_hierarchy_parses() -> None:
    xml = APPIUM.read_text(encoding="utf-8")
    body = xml[xml.index("<android.widget.FrameLayout") : xml.rindex("</hierarchy>")]
    tree = parse_hierarchy(body)
    assert len(tree) == 10 and (tree.screen_width, tree.screen_height) == (1080, 2400)


@pytest.mark.parametrize(
    ("xml", "words"),
    [
        (  # iOS (XCUITest) page source
            '<?xml version="1.0" encoding="UTF-8"?><AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication"'
            ' name="Settings" x="0" y="0" width="390" height="844"/></AppiumAUT>',
            ["<AppiumAUT>", "expected <hierarchy>"],
        ),
        (  # a hierarchy of elements that are neither <node> nor have bounds
            '<hierarchy rotation="0"><android.widget.FrameLayout class="x" text="a"/><window/></hierarchy>',
            ["holds no nodes", "<android.widget.FrameLayout>", "<window>"],
        ),
    ],
)
def test_other_formats_are_refused_clearly(xml: str, words: list[str]) -> None:
    with pytest.raises(HierarchyParseError) as info:
        parse_hierarchy(xml)
    for word in words:
        assert word in str(info.value)


def test_stray_elements_beside_nodes_are_reported() -> None:
    tree = parse_hierarchy('<hierarchy><node text="a" bounds="[0,0][9,9]"/><status code="0"/></hierarchy>')
    assert [n.text for n in tree.nodes] == ["a"]
    assert any("<status>" in w for w in tree.warnings)


# --- encodings ---------------------------------------------------------------------------------

JA = "設定 · Wi‑Fi をオンにする"


def _doc(text: str, encoding: str | None) -> str:
    decl = f'<?xml version="1.0" encoding="{encoding}"?>' if encoding else ""
    return (
        f'{decl}<hierarchy rotation="0"><node class="android.widget.TextView" text="{text}" '
        'clickable="true" bounds="[0,0][1080,200]"/></hierarchy>'
    )


@pytest.mark.parametrize(
    ("encoding", "declared", "text"),
    [
        ("shift_jis", "Shift_JIS", "設定をオンにする"),
        ("euc_jp", "EUC-JP", "設定をオンにする"),
        ("gbk", "GBK", "设置 无线网络"),
        ("cp1251", "windows-1251", "Настройки"),
        ("latin-1", "ISO-8859-1", "Paramètres"),
    ],
)
def test_declared_legacy_encodings_are_honoured(encoding: str, declared: str, text: str) -> None:
    raw = _doc(text, declared).encode(encoding)
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # the bytes really are not UTF-8
    tree = parse_hierarchy(raw)
    assert [n.text for n in tree.nodes] == [text]
    assert tree.warnings == ()


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
@pytest.mark.parametrize("declared", [None, "UTF-16", "UTF-8"])
def test_utf16_and_boms(codec: str, declared: str | None) -> None:
    """With a BOM (utf-16, utf-32, utf-8-sig) or without (utf-16-le/-be), whatever the declaration."""
    tree = parse_hierarchy(_doc(JA, declared).encode(codec))
    assert [n.text for n in tree.nodes] == [JA]
    assert tree.warnings == ()


def test_undecodable_bytes_are_reported() -> None:
    raw = _doc("Wi-Fi", None).encode().replace(b"Wi-Fi", b"Wi\xff\xfe-Fi")
    tree = parse_hierarchy(raw)
    assert tree.nodes[0].text == "Wi\ufffd\ufffd-Fi"
    (warning,) = tree.warnings
    assert "not valid utf-8" in warning and "2 undecodable" in warning
    first_bad = raw.index(b"\xff")
    assert f"first at byte {first_bad})" in warning
    utf16 = b"\xff\xfe" + _doc("ok", None).encode("utf-16-le") + b"\x00\xd8"  # lone surrogate at the end
    assert any("not valid utf-16-le" in w for w in parse_hierarchy(utf16).warnings)


def test_wrong_or_unknown_declarations_fall_back_to_utf8_with_a_warning() -> None:
    lying = parse_hierarchy(_doc(JA, "Shift_JIS").encode("utf-8"))  # says Shift_JIS, is UTF-8
    assert lying.nodes[0].text == JA
    assert any("bytes are UTF-8" in w for w in lying.warnings)
    unknown = parse_hierarchy(_doc("ok", "x-no-such-codec").encode())
    assert unknown.nodes[0].text == "ok"
    assert any("unknown encoding 'x-no-such-codec'" in w for w in unknown.warnings)
    narrow = parse_hierarchy(_doc("ok", "UTF-16").encode("utf-8"))  # declaration readable as ASCII
    assert narrow.nodes[0].text == "ok"
    assert any("bytes are not" in w for w in narrow.warnings)


def test_text_input_ignores_the_declaration() -> None:
    assert parse_hierarchy(_doc(JA, "Shift_JIS")).nodes[0].text == JA


@settings(deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40),
    st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "gb18030"]),
)
def test_any_text_round_trips_through_any_encoding(text: str, codec: str) -> None:
    escaped = text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    declared = "GB18030" if codec == "gb18030" else None
    tree = parse_hierarchy(_doc(escaped, declared).encode(codec))
    assert tree.nodes[0].text == text.replace("\ufffe", "").replace("\uffff", "")
