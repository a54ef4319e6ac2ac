from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from perception_dumps import dump, dump_files

from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import hit_test, target_for_element
from artemis_cli.perception.types import Target


def _center_of(tree, text: str) -> tuple[int, int]:
    (node,) = [n for n in tree.nodes if n.text == text]
    return node.bounds.center


def test_settings_row_yields_its_text() -> None:
    tree = parse_hierarchy(dump("008"))
    x, y = _center_of(tree, "Network & internet")
    target = hit_test(tree, x, y)
    assert target.label_source == "hit_test"
    assert target.text.startswith("Network & internet")  # borrowed by the clickable row
    assert target.class_name == "android.widget.LinearLayout"
    assert target.bounds == (0, 1269, 1080, 1524)
    assert target.element_index is None
    assert "Network & internet" in target.describe()


def test_interactive_beats_larger_and_plain_text() -> None:
    tree = parse_hierarchy(dump("017"))
    x, y = _center_of(tree, "Войти")  # TextView inside a clickable ViewGroup
    target = hit_test(tree, x, y)
    assert target.content_desc == "Войти" and target.class_name.endswith("ViewGroup")
    password = hit_test(tree, 540, 1380)
    assert password.password and password.text == "Пароль"


def test_point_in_dialog_yields_dialog_button() -> None:
    tree = parse_hierarchy(dump("019"))
    x, y = _center_of(tree, "Wait")
    target = hit_test(tree, x, y)
    assert target.text == "Wait" and target.resource_id == "android:id/aerr_wait"


def test_dialog_window_wins_over_the_app_under_it() -> None:
    """Stack the 030 dialog window over the 008 settings app: the smaller window is drawn on top."""
    app = dump("008").decode()
    dialog = dump("030").decode()

    def windows(xml: str) -> str:
        start = xml.index("<node")
        return xml[start : xml.rindex("</hierarchy>")]

    combined = f'<hierarchy rotation="0">{windows(app)}{windows(dialog)}</hierarchy>'
    tree = parse_hierarchy(combined)
    assert [n.path for n in tree.nodes if n.depth == 0] == ["0", "1"]
    ok = next(n for n in tree.nodes if n.text == "OK")
    target = hit_test(tree, *ok.bounds.center)
    assert target.text == "OK" and target.resource_id == "android:id/button1"
    # dialog body (not a button): the dialog's message, not the settings row below
    message = next(n for n in tree.nodes if n.resource_id == "android:id/message")
    assert hit_test(tree, *message.bounds.center).text == message.text
    # outside the dialog window: the app again
    x, y = _center_of(tree, "Lock screen & wallpaper")
    assert hit_test(tree, x, y).text.startswith("Lock screen & wallpaper")


def test_multiwindow_status_bar_and_app() -> None:
    tree = parse_hierarchy(dump("021"))
    assert hit_test(tree, 39, 18).resource_id.endswith(":id/clock")
    assert hit_test(tree, 119, 604).content_desc == "Back"


def test_point_on_nothing_yields_none() -> None:
    tree = parse_hierarchy(dump("019"))  # floating window at [28,703][1052,1217]
    assert hit_test(tree, 5, 5) == Target(label_source="none")
    assert hit_test(tree, 5, 5).describe() == "(no element)"
    game = parse_hierarchy(dump("015"))
    x, y = game.screen_width // 2, game.screen_height // 2
    assert hit_test(game, x, y).label_source == "none"
    assert hit_test(game, -10, 10**7).label_source == "none"


def test_target_for_element_uses_index() -> None:
    tree = parse_hierarchy(dump("008"))
    elements = index_elements(tree)
    row = next(e for e in elements if "Network & internet" in e.label)
    target = target_for_element(row)
    assert target.label_source == "index" and target.element_index == row.index
    assert target.text == row.label and target.bounds == (0, 1269, 1080, 1524)
    assert Target.from_dict(target.to_dict()) == target


_TREES = [parse_hierarchy(p.read_bytes()) for p in dump_files()]


@settings(deadline=None)
@given(st.integers(0, len(_TREES) - 1), st.integers(-100, 3200), st.integers(-100, 3200))
def test_hit_test_never_raises(which: int, x: int, y: int) -> None:
    target = hit_test(_TREES[which], x, y)
    assert target.label_source in ("hit_test", "none")
    if target.label_source == "hit_test":
        assert target.bounds is not None
        left, top, right, bottom = target.bounds
        assert left <= x < right and top <= y < bottom
