"""A dump of the active window completed with the window manager's windows (perception/wm_windows.py):
``dumpsys window`` parsed in Android 14's and Android 11's formats, and real phones' single-window
shell dumps (fixtures/real-dumps) perceived with the bars and keyboard a phone draws over them."""

from __future__ import annotations

import pytest
from perception_dumps import dump, dump_files

from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import HitIndex, hit_test
from artemis_cli.perception.types import Bounds
from artemis_cli.perception.windows import Layer, keyboard_in_dump
from artemis_cli.perception.wm_windows import WmWindow, parse_window_list, with_wm_windows

# Android 14 (the shape of a CI emulator's `dumpsys window windows`, trimmed): top-most first
DUMPSYS_14 = """WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #0 Window{829de41 u0 ScreenDecorOverlayBottom}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
    mAttrs={(0,0)(fillx126) ty=2024 fmt=TRANSLUCENT
    Frames: parent=[0,2274][1080,2400] display=[0,2274][1080,2400] frame=[0,2274][1080,2400] last=[0,2274][1080,2400] insetsChanged=false
    isVisible=true
  Window #1 Window{e56b35e u0 NavigationBar0}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
    mAttrs={(0,0)(fillxfill) sim={adjust=pan} ty=NAVIGATION_BAR fmt=TRANSLUCENT
    mViewVisibility=0x0 mHaveFrame=true mObscured=false
    Frames: parent=[0,2274][1080,2400] display=[0,2274][1080,2400] frame=[0,2274][1080,2400] last=[0,2274][1080,2400] insetsChanged=false
    isOnScreen=true
    isVisible=true
  Window #2 Window{31fbf1a u0 NotificationShade}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
    mAttrs={(0,0)(fillxfill) ty=NOTIFICATION_SHADE fmt=TRANSLUCENT
    mViewVisibility=0x4 mHaveFrame=true mObscured=false
    Frames: parent=[0,0][1080,2400] display=[0,0][1080,2400] frame=[0,0][1080,2400] last=[0,0][1080,2400] insetsChanged=false
    isOnScreen=false
    isVisible=false
  Window #3 Window{9ef7b58 u0 StatusBar}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
    mAttrs={(0,0)(fillx128) ty=STATUS_BAR fmt=TRANSLUCENT
    Frames: parent=[0,0][1080,128] display=[0,0][1080,128] frame=[0,0][1080,128] last=[0,0][1080,128] insetsChanged=false
    isVisible=true
  Window #4 Window{ee4ee0c u0 InputMethod}:
    mOwnerUid=10133 showForAllUsers=false package=com.google.android.inputmethod.latin appop=NONE
    mAttrs={(0,0)(fillxwrap) ty=INPUT_METHOD fmt=TRANSPARENT
    Frames: parent=[0,1517][1080,2400] display=[0,1517][1080,2400] frame=[0,1517][1080,2400] last=[0,1517][1080,2400] insetsChanged=false
    isVisible=true
  Window #5 Window{3a9bb36 u0 com.android.settings/com.android.settings.Settings}:
    mOwnerUid=10190 showForAllUsers=false package=com.android.settings appop=NONE
    mAttrs={(0,0)(fillxfill) ty=BASE_APPLICATION fmt=TRANSLUCENT
    Frames: parent=[0,0][1080,2400] display=[0,0][1080,2400] frame=[0,0][1080,2400] last=[0,0][1080,2400] insetsChanged=false
    isVisible=true
  Window #6 Window{20183f4 u0 com.android.systemui.wallpapers.ImageWallpaper}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
    mAttrs={(0,0)(fillxfill) ty=WALLPAPER fmt=TRANSLUCENT
    Frames: parent=[0,0][1080,2400] display=[0,0][1080,2400] frame=[0,0][1080,2400] last=[0,0][1080,2400] insetsChanged=false
    isVisible=true

  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] package=com.example.not.a.window}
  mCurrentFocus=Window{3a9bb36 u0 com.android.settings/com.android.settings.Settings}
"""

# Android 11 and older: "mFrame=" (and a "Frames:" block whose first rect is not the frame)
DUMPSYS_11 = """  Window #1 Window{e56b35e u0 NavigationBar0}:
    mOwnerUid=10144 showForAllUsers=true package=com.android.systemui appop=NONE
    mAttrs={(0,0)(fillxfill) sim={adjust=pan} ty=NAVIGATION_BAR fmt=TRANSLUCENT
    Frames: containing=[0,1794][1080,1920] parent=[0,1794][1080,1920]
    mFrame=[0,1794][1080,1920] last=[0,1794][1080,1920]
    isVisible=true
"""


def test_android_14_window_list_top_most_first() -> None:
    wins = parse_window_list(DUMPSYS_14)
    assert [(w.title, w.type, w.visible) for w in wins] == [
        ("ScreenDecorOverlayBottom", "2024", True), ("NavigationBar0", "NAVIGATION_BAR", True),
        ("NotificationShade", "NOTIFICATION_SHADE", False), ("StatusBar", "STATUS_BAR", True),
        ("InputMethod", "INPUT_METHOD", True), ("com.android.settings/com.android.settings.Settings",
                                                "BASE_APPLICATION", True),
        ("com.android.systemui.wallpapers.ImageWallpaper", "WALLPAPER", True)]
    assert wins[1].frame == Bounds(0, 2274, 1080, 2400) and wins[4].package == "com.google.android.inputmethod.latin"
    assert "com.example.not.a.window" not in {w.package for w in wins}  # after the list: not a window


def test_android_11_mframe() -> None:
    (nav,) = parse_window_list(DUMPSYS_11)
    assert (nav.title, nav.frame) == ("NavigationBar0", Bounds(0, 1794, 1080, 1920))


def test_garbage_is_no_window() -> None:
    assert parse_window_list("") == parse_window_list("Can't find service: window\n") == []
    assert parse_window_list("  Window #0 Window{zz u0 X}:\n    frame=[a,b][c,d]\n") == []


def _completed(name: str, windows: list[WmWindow]) -> tuple[str, object]:
    xml = dump(name).decode("utf-8")
    return xml, parse_hierarchy(with_wm_windows(xml, windows))


def test_settings_dump_with_bars_and_keyboard_from_the_window_manager() -> None:
    """008 is a real single-window `uiautomator dump` of Settings (its root covers the whole
    1080x2400 screen). The bars and the keyboard the window manager lists take the touches there."""
    xml = dump("008").decode("utf-8")
    plain = parse_hierarchy(xml)
    tree = parse_hierarchy(with_wm_windows(xml, parse_window_list(DUMPSYS_14)))
    index = HitIndex.of(tree)
    assert [(w.layer, w.synthetic) for w in index.windows] == [
        (Layer.APP, False), (Layer.IME, True), (Layer.STATUS_BAR, True), (Layer.NAV_BAR, True)]
    assert tree.nodes[0].window_title == "com.android.settings/com.android.settings.Settings"
    assert hit_test(tree, 270, 2337).content_desc == "Navigation bar"  # not the app's node under it
    assert hit_test(plain, 270, 2337).content_desc != "Navigation bar"
    assert hit_test(tree, 540, 1800).content_desc == "Keyboard"
    # the element list: no window-manager window, nothing that the keyboard covers
    els = index_elements(tree)
    assert not any(e.node.synthetic for e in els)
    assert all(e.center[1] < 1517 or e.center[1] >= 2400 for e in els if e.node.bounds.top >= 128)
    assert len(els) < len(index_elements(plain))
    assert keyboard_in_dump(index.windows) is None  # dumpsys input_method says it, not these windows


@pytest.mark.parametrize("path", [p for p in dump_files() if p.name[:3] not in ("021", "025", "041", "042")],
                         ids=lambda p: p.name[:3])
def test_every_real_single_window_dump_takes_the_bars(path: object) -> None:
    """Every real dump with one top-level node (a phone's `uiautomator dump`) gets the window
    manager's bars; its own nodes are kept as they were, the bars take their points."""
    xml = path.read_bytes().decode("utf-8")  # type: ignore[attr-defined]
    plain = parse_hierarchy(xml)
    assert len([n for n in plain.nodes if n.depth == 0]) == 1
    w, h = plain.screen_width, plain.screen_height
    bars = [WmWindow("NavigationBar0", "com.android.systemui", "NAVIGATION_BAR", Bounds(0, h - 60, w, h), True),
            WmWindow("StatusBar", "com.android.systemui", "STATUS_BAR", Bounds(0, 0, w, 40), True)]
    tree = parse_hierarchy(with_wm_windows(xml, bars), screen_size=(w, h))
    assert tree.nodes[: len(plain.nodes)] == plain.nodes or [
        n for n in tree.nodes if not n.synthetic and n.depth > 0] == [n for n in plain.nodes if n.depth > 0]
    assert [n.content_desc for n in tree.nodes if n.synthetic] == ["Status bar", "Navigation bar"]
    assert hit_test(tree, w // 2, h - 30).content_desc == "Navigation bar"
    assert not any(e.node.synthetic for e in index_elements(tree))


def test_a_dump_of_every_window_is_left_alone() -> None:
    xml = dump("042").decode("utf-8")
    assert with_wm_windows(xml, parse_window_list(DUMPSYS_14)) == xml


def test_window_titles_are_device_text() -> None:
    xml = dump("008").decode("utf-8")
    evil = [WmWindow('x"/><node text="pwned', "com.android.systemui", "STATUS_BAR", Bounds(0, 0, 10, 10), True)]
    tree = parse_hierarchy(with_wm_windows(xml, evil))
    assert not any(n.text == "pwned" for n in tree.nodes)
    assert any(n.window_title == 'x"/><node text="pwned' for n in tree.nodes)
