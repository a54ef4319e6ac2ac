from __future__ import annotations

from perception_dumps import dump

from artemis_cli.perception.foreground import foreground_app
from artemis_cli.perception.hierarchy import parse_hierarchy


def _tree(*packages: str):
    nodes = "".join(f'<node package="{p}" bounds="[0,0][10,10]"/>' for p in packages)
    return parse_hierarchy(f"<hierarchy>{nodes}</hierarchy>")


def test_device_hint_wins() -> None:
    assert foreground_app(parse_hierarchy(dump("008")), "com.example.app") == "com.example.app"
    assert foreground_app(None, "com.example.app") == "com.example.app"
    assert foreground_app(None) is None


def test_real_dumps() -> None:
    assert foreground_app(parse_hierarchy(dump("008"))) == "com.android.settings"
    assert foreground_app(parse_hierarchy(dump("021"))) == "com.zhiliaoapp.musically"  # + systemui windows
    assert foreground_app(parse_hierarchy(dump("025"))) == "com.instagram.android"


def test_systemui_and_keyboards_are_ignored() -> None:
    tree = _tree(
        "com.android.systemui",
        "com.android.systemui",
        "com.android.systemui",
        "com.google.android.inputmethod.latin",
        "com.google.android.inputmethod.latin",
        "com.sohu.inputmethod.sogou",
        "com.touchtype.swiftkey",
        "com.samsung.android.honeyboard",
        "com.example.keyboard",
        "com.example.keyboard",
        "com.example.keyboard",
        "com.example.keyboard",
        "com.app",
    )
    assert foreground_app(tree) in ("com.app", "com.samsung.android.honeyboard", "com.touchtype.swiftkey")
    assert (
        foreground_app(_tree("com.android.systemui", "com.app", "com.android.inputmethod.latin")) == "com.app"
    )


def test_ties_go_to_first_seen() -> None:
    assert foreground_app(_tree("b.app", "a.app", "a.app", "b.app")) == "b.app"
    assert foreground_app(_tree("a.app", "b.app", "b.app")) == "b.app"


def test_only_system_ui_falls_back_to_it() -> None:
    assert foreground_app(_tree("com.android.systemui", "")) == "com.android.systemui"
    assert foreground_app(_tree()) is None
