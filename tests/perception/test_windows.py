"""Windows in drawing order (SPEC §6, §15 "Windows"): every multi-window real dump, hit-tested on
its status bar, navigation bar and app content, whatever the order of windows in the file."""

from __future__ import annotations

import dataclasses
import re

import pytest
from perception_dumps import dump, dump_files

from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import index_elements, render_element_list
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import HitIndex, hit_test
from artemis_cli.perception.types import UITree
from artemis_cli.perception.windows import Layer, order_windows

# (x, y) -> Target.describe() for points on each window of each multi-window real dump.
PINNED: dict[str, dict[tuple[int, int], str]] = {
    "021": {  # app, navigation bar, status bar (480x640)
        (39, 18): 'TextView "3:53" (id clock)',
        (119, 604): 'ImageView "Back" (id back)',
        (239, 604): 'ImageView "Home" (id home)',
        (240, 300): "RecyclerView (id g2y)",
        (460, 20): "(no element)",  # status bar, between icons: the status bar takes it
    },
    "025": {  # app (to y=2220), status bar, launcher gesture strip (nothing to hit: transparent)
        (118, 47): 'TextView "1:25 AM" (id clock)',
        (540, 2320): "(no element)",
        (540, 1945): 'Button "Dismiss" (id background_dimmer)',
        (983, 47): 'ImageView "Battery charging, 100 percent." (id battery_image)',
    },
    "041": {  # rotation 1: decoration, status bar, navigation bar on the right, app — app last
        (1848, 237): 'ImageView "Back" (id back)',
        (1848, 539): 'ImageView "Home" (id home)',
        (1848, 842): 'ImageView "Recents" (id recent_apps)',
        (203, 36): 'TextView "4:52" (id clock)',
        (1000, 36): "(no element)",
        (50, 540): 'View "lteboost3\\n37.27.143.156:11062\\nSOCKS5"',  # under the rounded corner
        (1531, 738): 'Button "Add proxy"',
    },
    "042": {  # decoration, status bar, Edge panel handle, navigation bar, full-screen app — app last
        (539, 1848): 'ImageView "Home" (id home)',
        (842, 1848): 'ImageView "Back" (id back)',
        (237, 1848): 'ImageView "Recents" (id recent_apps)',
        (95, 69): 'TextView "5:10" (id clock)',
        (1059, 541): 'RelativeLayout "Edge panels" (id trigger_layout_container)',
        (540, 30): "(no element)",  # status bar over the app's full-screen root
        (684, 1674): 'Button "Close Friends"',
        (87, 213): 'ImageView "Cancel" (id cancel_button)',
    },
}


def _windows(xml: str) -> list[str]:
    """The top-level <node> elements of a dump, as text (pretty-printed dumps: two-space indent)."""
    body = xml[xml.index("<hierarchy") :]
    body = body[body.index(">") + 1 : body.rindex("</hierarchy>")]
    starts = [m.start() for m in re.finditer(r"(?m)^  <node ", body)]
    return [body[a:b] for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]


def _reordered(prefix: str, order: list[int]) -> UITree:
    xml = dump(prefix).decode()
    windows = _windows(xml)
    assert len(windows) == len(order)
    head = xml[: xml.index(">", xml.index("<hierarchy")) + 1]
    return parse_hierarchy(head + "".join(windows[i] for i in order) + "</hierarchy>")


def test_every_multi_window_dump_is_pinned() -> None:
    multi = {
        p.name[:3]
        for p in dump_files()
        if sum(1 for n in parse_hierarchy(p.read_bytes()).nodes if n.depth == 0) > 1
    }
    assert multi == set(PINNED)


@pytest.mark.parametrize("prefix", sorted(PINNED))
def test_points_on_every_window(prefix: str) -> None:
    tree = parse_hierarchy(dump(prefix))
    got = {point: hit_test(tree, *point).describe() for point in PINNED[prefix]}
    assert got == PINNED[prefix]


@pytest.mark.parametrize("prefix", sorted(PINNED))
def test_file_order_does_not_matter(prefix: str) -> None:
    """Reversed and rotated window order: same hits, same element lines (up to list order)."""
    tree = parse_hierarchy(dump(prefix))
    count = sum(1 for n in tree.nodes if n.depth == 0)
    space = CoordinateSpace(tree.screen_width, tree.screen_height)

    def lines(t: UITree) -> list[str]:
        return sorted(
            line.split("] ", 1)[1] for line in render_element_list(index_elements(t), space).splitlines()
        )

    for order in (list(reversed(range(count))), [*range(1, count), 0]):
        other = _reordered(prefix, order)
        assert {p: hit_test(other, *p).describe() for p in PINNED[prefix]} == PINNED[prefix]
        assert lines(other) == lines(tree)


def test_drawing_order_of_041_and_042() -> None:
    layers = [w.layer for w in order_windows(parse_hierarchy(dump("041")))]
    assert layers == [Layer.APP, Layer.STATUS_BAR, Layer.NAV_BAR, Layer.DECOR]
    windows = order_windows(parse_hierarchy(dump("042")))
    assert [(w.layer, w.package) for w in windows] == [
        (Layer.APP, "com.instagram.androim"),  # full screen: under the Edge panel handle
        (Layer.APP, "com.samsung.android.app.cocktailbarservice"),
        (Layer.STATUS_BAR, "com.android.systemui"),
        (Layer.NAV_BAR, "com.android.systemui"),
        (Layer.DECOR, "com.android.systemui"),
    ]
    assert [w.catches_touches for w in windows] == [True, True, True, True, False]


def test_the_app_root_under_the_navigation_bar_is_not_hit() -> None:
    """The issue's repro: 042's Home used to hit the app's root FrameLayout."""
    target = hit_test(parse_hierarchy(dump("042")), 539, 1848)
    assert target.content_desc == "Home" and target.resource_id == "com.android.systemui:id/home"
    assert hit_test(parse_hierarchy(dump("041")), 1848, 237).content_desc == "Back"


# --- synthetic windows ---------------------------------------------------------------------------


def _node(
    bounds: str,
    *,
    pkg: str = "com.example",
    rid: str = "",
    text: str = "",
    desc: str = "",
    cls: str = "android.widget.FrameLayout",
    click: bool = False,
    display: str | None = None,
    children: str = "",
) -> str:
    attrs = (
        f'class="{cls}" package="{pkg}" resource-id="{rid}" text="{text}" content-desc="{desc}" '
        f'clickable="{str(click).lower()}" bounds="{bounds}"'
    )
    if display is not None:
        attrs += f' display-id="{display}"'
    return f"<node {attrs}>{children}</node>" if children else f"<node {attrs}/>"


APP = _node(
    "[0,0][1080,2400]",
    children=(
        _node("[0,100][1080,300]", text="Title", cls="android.widget.TextView")
        + _node("[0,1700][1080,1900]", text="Send", click=True, cls="android.widget.Button")
        + _node("[0,2000][1080,2350]", text="Footer link", click=True, cls="android.widget.Button")
        + _node("[0,1500][540,1700]", text="Half", click=True, cls="android.widget.Button")
    ),
)
KEYBOARD = _node(
    "[0,1600][1080,2400]",
    pkg="com.google.android.inputmethod.latin",
    children=(_node("[0,1600][540,2400]", pkg="com.google.android.inputmethod.latin", desc="q", click=True)),
)
SHADE = _node(
    "[0,0][1080,2400]",
    pkg="com.android.systemui",
    rid="com.android.systemui:id/notification_shade",
    children=_node("[0,0][1080,600]", pkg="com.android.systemui", text="Quick settings", click=True),
)
STATUS = _node(
    "[0,0][1080,96]",
    pkg="com.android.systemui",
    children=_node("[0,0][200,96]", pkg="com.android.systemui", text="9:41", rid="android:id/clock"),
)


def _tree(*windows: str) -> UITree:
    return parse_hierarchy('<hierarchy rotation="0">' + "".join(windows) + "</hierarchy>")


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_keyboard_is_over_the_app_and_covers_what_is_under_it(order: tuple[int, int]) -> None:
    tree = _tree(*[(APP, KEYBOARD)[i] for i in order])
    assert [w.layer for w in order_windows(tree)] == [Layer.APP, Layer.IME]
    assert hit_test(tree, 100, 1800).content_desc == "q"
    assert hit_test(tree, 800, 1800).describe() == "(no element)"  # keyboard background
    elements = {e.label: e for e in index_elements(tree)}
    assert "Send" not in elements and "Footer link" not in elements  # fully under the keyboard
    half = elements["Half"]  # [0,1500][540,1700], keyboard from y=1600: tapped in its visible part
    assert half.center == (270, 1550) and hit_test(tree, *half.center).text == "Half"
    assert elements["Title"].center == (540, 200)


def test_shade_is_over_the_status_bar_and_the_app() -> None:
    tree = _tree(SHADE, APP, STATUS)
    assert [w.layer for w in order_windows(tree)] == [Layer.APP, Layer.STATUS_BAR, Layer.SHADE]
    assert hit_test(tree, 100, 50).text == "Quick settings"
    assert hit_test(tree, 540, 1800).describe() == "(no element)"  # the shade takes it
    assert [e.label for e in index_elements(tree)] == ["Quick settings"]


def test_other_displays_are_ignored() -> None:
    tree = _tree(  # the other display's window comes last: it would be on top of this one
        _node(
            "[0,0][1080,2400]",
            display="0",
            children=_node("[0,0][1080,300]", text="Phone", click=True, display="0"),
        ),
        _node(
            "[0,0][1080,2400]",
            display="1",
            children=_node("[0,0][1080,2400]", text="Cast", click=True, display="1"),
        ),
    )
    assert hit_test(tree, 500, 100).text == "Phone"
    assert hit_test(tree, 500, 1000).describe() == "(no element)"
    assert [e.label for e in index_elements(tree)] == ["Phone"]
    only_two = _tree(
        _node("[0,0][100,100]", display="2", children=_node("[0,0][50,50]", text="A", display="2"))
    )
    assert hit_test(only_two, 10, 10).text == "A"  # no display 0: the lowest one is the screen


def test_empty_overlays_let_touches_through() -> None:
    overlay = _node("[0,0][1080,2400]", pkg="com.filter.bluelight")  # nothing to touch in it
    tree = _tree(APP, overlay)
    assert not order_windows(tree)[-1].catches_touches
    assert hit_test(tree, 540, 1800).text == "Send"
    assert "Send" in [e.label for e in index_elements(tree)]


def test_a_dialog_of_the_same_package_floats_over_the_app() -> None:
    dialog = _node("[100,800][980,1400]", children=_node("[600,1200][900,1350]", text="OK", click=True))
    for windows in ((APP, dialog), (dialog, APP)):
        tree = _tree(*windows)
        assert hit_test(tree, 700, 1300).text == "OK"
        assert hit_test(tree, 540, 1000).describe() == "(no element)"  # dialog body
        assert hit_test(tree, 540, 1800).text == "Send"


def test_index_is_built_once_per_tree() -> None:
    tree = parse_hierarchy(dump("042"))
    index = HitIndex.of(tree)
    hit_test(tree, 539, 1848)
    index_elements(tree)
    assert HitIndex.of(tree) is index
    assert parse_hierarchy(dump("042")) is tree  # the same dump parses to the same (immutable) tree
    again = dataclasses.replace(tree)
    assert again == tree and HitIndex.of(again) is not index  # cache is per object, not in ==
    assert "_cache" not in repr(tree)
