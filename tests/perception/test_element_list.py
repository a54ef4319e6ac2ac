from __future__ import annotations

from pathlib import Path

import pytest
from golden_files import assert_golden
from hypothesis import given, settings
from hypothesis import strategies as st
from perception_dumps import dump

from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import (
    MAX_LABEL_CHARS,
    index_elements,
    parse_element_lines,
    render_element_list,
)
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.types import Bounds, Element, UINode, UITree

GOLDEN = Path(__file__).parent / "golden"

# A hand-built screen exercising every rule of the format.
HAND_BUILT = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
 <node class="android.widget.FrameLayout" package="com.example" bounds="[0,0][1080,2400]">
  <node class="android.widget.TextView" text="Sign in" resource-id="com.example:id/title" bounds="[40,100][1040,200]"/>
  <node class="android.widget.LinearLayout" clickable="true" resource-id="com.example:id/row" bounds="[0,240][1080,400]">
   <node class="android.widget.TextView" text="Wi-Fi" bounds="[40,250][500,320]"/>
   <node class="android.widget.TextView" text="Connected to &quot;Home&quot;" bounds="[40,320][900,390]"/>
   <node class="android.widget.TextView" text="third line" bounds="[40,390][900,400]"/>
   <node class="android.widget.Switch" checkable="true" checked="true" clickable="true" resource-id="com.example:id/switch_widget" bounds="[940,280][1040,360]"/>
  </node>
  <node class="android.widget.EditText" text="" hint="Email" clickable="true" focusable="true" focused="true" long-clickable="true" resource-id="com.example:id/email" bounds="[40,440][1040,560]"/>
  <node class="android.widget.EditText" text="••••" password="true" clickable="true" focusable="true" resource-id="com.example:id/password" bounds="[40,580][1040,700]"/>
  <node class="android.widget.CheckBox" text="Remember me" checkable="true" checked="false" clickable="true" bounds="[40,720][600,800]"/>
  <node class="android.widget.Button" text="Log in" content-desc="Log in button" clickable="true" enabled="false" bounds="[40,820][1040,940]"/>
  <node class="android.widget.TextView" text="Line one&#10;line &quot;two&quot; \\ back [x] @(1,2)" bounds="[40,960][1040,1040]"/>
  <node class="android.widget.TextView" text="%s" bounds="[40,1060][1040,1100]"/>
  <node class="android.view.View" text="" content-desc="Close" clickable="true" selected="true" resource-id="RCS chat with A" bounds="[980,20][1060,80]"/>
  <node class="" text="no class" bounds="[0,1120][200,1160]"/>
  <node class="android.widget.HorizontalScrollView" scrollable="true" bounds="[0,1200][1080,1500]">
   <node class="android.widget.TextView" text="Tab A" bounds="[0,1200][300,1300]"/>
  </node>
  <node class="android.widget.TextView" text="off screen" bounds="[0,2500][100,2600]"/>
  <node class="android.widget.TextView" text="invisible" visible-to-user="false" bounds="[0,1600][100,1700]"/>
  <node class="android.widget.Button" clickable="true" text="zero size" bounds="[10,10][10,10]"/>
  <node class="android.widget.TextView" text="half off" bounds="[1000,2300][1200,2500]"/>
 </node>
</hierarchy>""" % ("A" * 100)


def _render(xml: str | bytes, mode: str = "pixels") -> str:
    tree = parse_hierarchy(xml)
    space = CoordinateSpace(tree.screen_width, tree.screen_height, mode)  # type: ignore[arg-type]
    return render_element_list(index_elements(tree), space) + "\n"


CASES = {
    "008-settings-home": lambda: _render(dump("008")),
    "017-login-password": lambda: _render(dump("017")),
    "004-wechat-contacts": lambda: _render(dump("004")),
    "hand-built": lambda: _render(HAND_BUILT),
    "hand-built-normalized": lambda: _render(HAND_BUILT, "normalized"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_element_lists(name: str) -> None:
    assert_golden(GOLDEN / f"{name}.txt", CASES[name]())


def test_rules_on_hand_built_tree() -> None:
    tree = parse_hierarchy(HAND_BUILT)
    elements = index_elements(tree)
    by_label = {e.label: e for e in elements}
    row = by_label['Wi-Fi · Connected to "Home"']
    assert row.label_borrowed and row.node.clickable
    # texts already in the row's borrowed label are dropped, the third line is not
    texts = [e.node.text for e in elements]
    assert "Wi-Fi" not in texts and 'Connected to "Home"' not in texts
    assert "third line" in texts
    # a scroll container never borrows; its children stay visible
    scroll = next(e for e in elements if e.node.scrollable)
    assert scroll.label == "" and not scroll.label_borrowed
    assert "Tab A" in texts
    for hidden in ("off screen", "invisible", "zero size"):
        assert hidden not in texts
    assert "half off" in texts
    assert [e.index for e in elements] == list(range(len(elements)))
    # deterministic
    assert index_elements(parse_hierarchy(HAND_BUILT)) == elements


def test_network_row_in_settings_is_one_line() -> None:
    elements = index_elements(parse_hierarchy(dump("008")))
    rows = [e for e in elements if "Network & internet" in e.label]
    assert len(rows) == 1 and rows[0].node.clickable and rows[0].label_borrowed


def test_render_line_details() -> None:
    lines = _render(HAND_BUILT).splitlines()
    assert all(line.startswith(f"[{i}] ") for i, line in enumerate(lines))
    assert '[1] LinearLayout "Wi-Fi · Connected to \\"Home\\"" id=row {click} @(540,320)' in lines
    # a hint is a placeholder, never content: shown as hint="…", with no label
    assert '[4] EditText hint="Email" id=email {click,long,edit,focused} @(540,500)' in lines
    assert any('"Log in" desc="Log in button"' in line and "{click,disabled}" in line for line in lines)
    assert any(f'"{"A" * 100}"' in line for line in lines)  # the current screen's text is kept whole
    assert any(' View "no class" ' in line for line in lines)
    assert any('id="RCS chat with A"' in line for line in lines)


def _node(**kw) -> UINode:
    return UINode(path="0", depth=0, bounds=Bounds(0, 0, 100, 100), **kw)


_label = st.one_of(st.text(max_size=120), st.text(min_size=MAX_LABEL_CHARS - 5, max_size=MAX_LABEL_CHARS + 5))
_flags_bools = st.fixed_dictionaries(
    {
        k: st.booleans()
        for k in (
            "clickable",
            "long_clickable",
            "scrollable",
            "checkable",
            "checked",
            "selected",
            "focused",
            "password",
            "enabled",
        )
    }
)


@settings(deadline=None)
@given(
    text=_label,
    desc=_label,
    rid=st.one_of(
        st.just(""), st.text(min_size=1, max_size=30), st.text(max_size=20).map(lambda s: "pkg:id/" + s)
    ),
    cls=st.sampled_from(["android.widget.Button", "", "android.widget.EditText", "a.b.C d", "X\u2028Y"]),
    flags=_flags_bools,
    borrowed=_label,
    hint=_label,
    index=st.integers(0, 10_000),
    box=st.tuples(st.integers(0, 1079), st.integers(0, 2399), st.integers(1, 1080), st.integers(1, 2400)),
    mode=st.sampled_from(["pixels", "normalized"]),
)
def test_parse_element_lines_is_the_inverse(text, desc, rid, cls, flags, borrowed, hint, index, box, mode) -> None:
    left, top, w, h = box
    node = UINode(
        path="0",
        depth=0,
        class_name=cls,
        text=text,
        content_desc=desc,
        hint=hint,
        resource_id=rid,
        bounds=Bounds(left, top, left + w, top + h),
        **flags,
    )
    label = text or desc or borrowed
    element = Element(
        index=index, node=node, label=label, label_borrowed=not (text or desc) and bool(borrowed)
    )
    space = CoordinateSpace(1080, 2400, mode)
    other = Element(index=index + 1, node=_node(text="x"), label="x")
    rendered = render_element_list([element, other], space)
    assert len(rendered.splitlines()) == 2  # device text can never add a line
    noise = "Here are the elements:\n" + rendered + "\n[not an element]\n"
    parsed = parse_element_lines(noise)
    assert len(parsed) == 2
    p = parsed[0]

    def cut(s: str) -> str:
        return s[:MAX_LABEL_CHARS] + "…" if len(s) > MAX_LABEL_CHARS else s

    assert p.index == index
    assert p.label == cut(label)
    edit = cls == "android.widget.EditText"
    shown_text = "" if edit and hint and text == hint else text  # an empty field reports its hint as text
    assert p.desc == (cut(desc) if shown_text and desc and shown_text != desc else "")
    shown_hint = hint.strip() if edit and hint.strip() != label.strip() else ""
    assert p.hint == cut(shown_hint)
    expected_id = rid.split(":id/", 1)[1] if ":id/" in rid else rid
    assert p.short_id == expected_id
    assert p.short_class and " " not in p.short_class
    assert set(p.flags) <= {
        "click",
        "long",
        "scroll",
        "edit",
        "checked",
        "unchecked",
        "selected",
        "focused",
        "password",
        "disabled",
    }
    assert ("click" in p.flags) == flags["clickable"]
    assert ("disabled" in p.flags) == (not flags["enabled"])
    assert ("checked" in p.flags or "unchecked" in p.flags) == flags["checkable"]
    visible_px = ((left + min(left + w, 1080)) // 2, (top + min(top + h, 2400)) // 2)
    assert p.center == space.from_pixels(*visible_px)
    assert parsed[1].label == "x"


def test_empty_list_renders_empty() -> None:
    assert render_element_list([], CoordinateSpace(10, 10)) == ""
    assert index_elements(UITree(rotation=0, nodes=(), screen_width=0, screen_height=0)) == []


def test_hints_are_never_content() -> None:
    """An empty field shows ``hint="…"`` and no label, also when Android reports the hint as its
    text (it does for empty fields); a filled field shows its text and the hint that names it."""
    space = CoordinateSpace(1080, 2400, "pixels")

    def line(text: str = "", hint: str = "", content_desc: str = "") -> str:
        xml = (f'<hierarchy rotation="0"><node class="android.widget.EditText" text="{text}" hint="{hint}" '
               f'content-desc="{content_desc}" clickable="true" bounds="[0,0][100,100]"/></hierarchy>')
        (element,) = index_elements(parse_hierarchy(xml, screen_size=(1080, 2400)))
        return render_element_list([element], space)

    assert line(hint="Search") == '[0] EditText hint="Search" {click,edit} @(50,50)'
    assert line(text="Search", hint="Search") == '[0] EditText hint="Search" {click,edit} @(50,50)'
    assert line(text="Search", hint="Search", content_desc="Find") == '[0] EditText "Find" hint="Search" {click,edit} @(50,50)'
    assert line(text="pizza", hint="Search") == '[0] EditText "pizza" hint="Search" {click,edit} @(50,50)'
    assert line(text="pizza") == '[0] EditText "pizza" {click,edit} @(50,50)'
    (parsed,) = parse_element_lines(line(text="pizza", hint="Search"))
    assert (parsed.label, parsed.hint) == ("pizza", "Search")


def test_a_long_text_is_whole_up_to_the_guard() -> None:
    space = CoordinateSpace(1080, 2400, "pixels")
    for size, shown in ((300, 300), (MAX_LABEL_CHARS, MAX_LABEL_CHARS), (MAX_LABEL_CHARS * 3, MAX_LABEL_CHARS)):
        xml = (f'<hierarchy rotation="0"><node class="android.widget.TextView" text="{"x" * size}" '
               'bounds="[0,0][100,100]"/></hierarchy>')
        (element,) = index_elements(parse_hierarchy(xml, screen_size=(1080, 2400)))
        (parsed,) = parse_element_lines(render_element_list([element], space))
        assert parsed.label == "x" * shown + ("…" if size > shown else "")
