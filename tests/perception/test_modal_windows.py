"""Which windows are modal (perception/windows.py, perception/modal.py), on real phones' dumps
(fixtures/real-dumps): a dialog over its app in a dump of every window, single-window dumps of a
dialog completed from ``dumpsys window`` (``ty=APPLICATION fl=DIM_BEHIND``, the framework's
``ty=SYSTEM_ALERT`` error dialog), a bottom sheet over a scrim, a pop-up menu, and what is never
modal: the keyboard, the bars, another app's overlay (Samsung's Edge panel handle), an
autocomplete drop-down (``NOT_FOCUSABLE``)."""

from __future__ import annotations

import re

from perception_dumps import dump

from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import index_screen, render_element_list
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.modal import behind_line, blocking, modal_in_front
from artemis_cli.perception.types import Bounds, UITree
from artemis_cli.perception.windows import Layer
from artemis_cli.perception.wm_windows import WmWindow, parse_window_list, with_wm_windows


def _block(n: int, title: str, package: str, ty: str, frame: Bounds, flags: str | None) -> str:
    fl = f"      fl={flags}\n" if flags is not None else ""
    return (f"  Window #{n} Window{{a{n}b2c3 u0 {title}}}:\n"
            f"    mOwnerUid=10190 showForAllUsers=false package={package} appop=NONE\n"
            f"    mAttrs={{(0,0)(wrapxwrap) gr=CENTER sim={{adjust=pan}} ty={ty} fmt=TRANSLUCENT\n{fl}"
            f"      pfl=USE_BLAST\n"
            f"    Frames: parent=[0,0][1,1] display=[0,0][1,1] frame={frame} last={frame} insetsChanged=false\n"
            "    isVisible=true\n")


def _dumpsys(*blocks: tuple[str, str, str, Bounds, str | None]) -> str:
    """``dumpsys window windows`` with these windows (top-most first), as Android 14 prints them."""
    return "WINDOW MANAGER WINDOWS (dumpsys window windows)\n" + "".join(
        _block(n, *b) for n, b in enumerate(blocks))


def _bars(w: int, h: int) -> list[tuple[str, str, str, Bounds, str | None]]:
    return [("NavigationBar0", "com.android.systemui", "NAVIGATION_BAR", Bounds(0, h - 48, w, h),
             "NOT_FOCUSABLE NOT_TOUCH_MODAL LAYOUT_IN_SCREEN"),
            ("StatusBar", "com.android.systemui", "STATUS_BAR", Bounds(0, 0, w, 50), "NOT_FOCUSABLE LAYOUT_IN_SCREEN")]


def _completed(name: str, size: tuple[int, int], windows: list[WmWindow]) -> UITree:
    return parse_hierarchy(with_wm_windows(dump(name).decode("utf-8"), windows), screen_size=size)


def _modal_windows(tree: UITree) -> list[tuple[str, str]]:
    return [(w.package, w.modal_kind) for w in HitIndex.of(tree).windows if w.modal]


def test_dumpsys_flags_parse_as_names_or_numbers() -> None:
    wins = parse_window_list(_dumpsys(
        ("com.android.settings", "com.android.settings", "APPLICATION", Bounds(18, 498, 702, 894),
         "DIM_BEHIND ALT_FOCUSABLE_IM HARDWARE_ACCELERATED"),
        ("PopupWindow:53a5957", "com.app", "APPLICATION_PANEL", Bounds(0, 0, 10, 10), "#18002008 pfl=0x40"),
        ("Old", "com.app", "2", Bounds(0, 0, 10, 10), None)))
    assert [w.flags for w in wins] == [("DIM_BEHIND", "ALT_FOCUSABLE_IM", "HARDWARE_ACCELERATED"),
                                      ("NOT_FOCUSABLE",), None]


def test_a_usb_dialog_dumped_alone_is_modal_over_settings_from_dim_behind() -> None:
    """030: a phone's `uiautomator dump` of the USB dialog alone (root at 18,498); the window
    manager has Settings under it and prints the dialog's DIM_BEHIND."""
    w, h = 720, 1280
    report = parse_window_list(_dumpsys(
        *_bars(w, h),
        ("com.android.settings", "com.android.settings", "APPLICATION", Bounds(18, 498, 702, 894),
         "DIM_BEHIND ALT_FOCUSABLE_IM HARDWARE_ACCELERATED"),
        ("com.android.settings/com.android.settings.Settings", "com.android.settings", "BASE_APPLICATION",
         Bounds(0, 0, w, h), "LAYOUT_IN_SCREEN HARDWARE_ACCELERATED")))
    tree = _completed("030", (w, h), report)
    index = HitIndex.of(tree)
    assert _modal_windows(tree) == [("com.android.settings", "dialog")]
    modal = modal_in_front(index)
    assert modal is not None and modal.name == 'the dialog "Dùng USB để truyền tải file?"'
    assert blocking(index, 100, 200) is modal  # over the Settings screen behind: not sent
    assert blocking(index, 582, 806) is None  # OK, inside the dialog
    assert blocking(index, 100, h - 20) is None  # the navigation bar above it still takes its touch
    assert blocking(index, 100, 20) is None  # and the status bar


def test_the_same_dialog_with_not_touch_modal_lets_touches_through() -> None:
    w, h = 720, 1280
    report = parse_window_list(_dumpsys(
        ("com.android.settings", "com.android.settings", "APPLICATION", Bounds(18, 498, 702, 894),
         "NOT_TOUCH_MODAL DIM_BEHIND"),
        ("com.android.settings/com.android.settings.Settings", "com.android.settings", "BASE_APPLICATION",
         Bounds(0, 0, w, h), "")))
    tree = _completed("030", (w, h), report)
    assert _modal_windows(tree) == [] and blocking(HitIndex.of(tree), 100, 200) is None


def test_the_anr_dialog_is_the_frameworks_system_alert_and_modal() -> None:
    """019: "System UI isn't responding", package android, a floating window at 28,703."""
    w, h = 1080, 1920
    report = parse_window_list(_dumpsys(
        *_bars(w, h),
        ("Application Not Responding: com.android.systemui", "android", "SYSTEM_ALERT", Bounds(28, 703, 1052, 1217),
         "DIM_BEHIND ALT_FOCUSABLE_IM HARDWARE_ACCELERATED"),
        ("com.example/com.example.Main", "com.example", "BASE_APPLICATION", Bounds(0, 0, w, h), "")))
    tree = _completed("019", (w, h), report)
    modal = modal_in_front(HitIndex.of(tree))
    assert modal is not None and modal.window.package == "android"
    assert modal.name == '''the dialog "System UI isn't responding"'''
    assert blocking(HitIndex.of(tree), 540, 300) is modal and blocking(HitIndex.of(tree), 540, 965) is None


def test_a_dialog_over_its_app_in_a_dump_of_every_window_hides_the_app() -> None:
    """Settings' home (008) and Settings' USB dialog (030) as uiautomator2 dumps them: one top-level
    node per window, no window manager to ask. The AlertDialog frame makes it modal; the list keeps
    the dialog's elements only and counts the others in one line."""
    settings = dump("008").decode("utf-8")
    dialog = dump("030").decode("utf-8")
    body = re.search(r"<hierarchy[^>]*>(.*)</hierarchy>", dialog, re.S)
    assert body is not None
    both = settings.replace("</hierarchy>", body.group(1) + "</hierarchy>")
    tree = parse_hierarchy(both, screen_size=(1080, 2400))
    alone = index_screen(parse_hierarchy(settings))
    screen = index_screen(tree)
    assert _modal_windows(tree) == [("com.android.settings", "dialog")]
    assert screen.modal is not None and screen.behind == len(alone.elements)
    assert {e.node.resource_id for e in screen.elements} >= {"android:id/button1", "android:id/button2"}
    assert all(screen.modal.window.root <= tree.nodes.index(e.node) < screen.modal.window.end
               for e in screen.elements)
    text = render_element_list(screen.elements, CoordinateSpace(1080, 2400, "pixels"))
    assert "Network & internet" in render_element_list(alone.elements, CoordinateSpace(1080, 2400, "pixels"))
    assert "Network & internet" not in text
    assert behind_line(screen.modal, screen.behind) == (
        f'{screen.behind} elements behind the dialog "Dùng USB để truyền tải file?" (not listed: it takes every touch)')
    assert blocking(HitIndex.of(tree), 540, 1500) is screen.modal


def test_a_bottom_sheet_over_a_scrim_is_modal_by_its_touch_outside() -> None:
    """018: YouTube's gallery BottomSheetDialog (touch_outside over the screen, the sheet beside it)
    over YouTube's screen; the window manager of an old phone prints no flags."""
    w, h = 720, 1280
    report = parse_window_list(_dumpsys(
        ("com.google.android.youtube", "com.google.android.youtube", "APPLICATION", Bounds(0, 0, w, h), None),
        ("com.google.android.youtube/com.google.android.apps.youtube.app.WatchWhileActivity",
         "com.google.android.youtube", "BASE_APPLICATION", Bounds(0, 0, w, h), None)))
    tree = _completed("018", (w, h), report)
    assert _modal_windows(tree) == [("com.google.android.youtube", "sheet")]


def test_a_pop_up_menu_is_modal_and_an_autocomplete_drop_down_is_not() -> None:
    """A focusable PopupWindow (an overflow menu: ty=APPLICATION_PANEL, focusable) takes the outside
    touch and closes; a drop-down under the field being typed into is NOT_FOCUSABLE."""
    w, h = 1080, 2400
    menu = parse_window_list(_dumpsys(
        ("PopupWindow:53a5957", "com.android.settings", "APPLICATION_PANEL", Bounds(500, 100, 1060, 700),
         "ALT_FOCUSABLE_IM SPLIT_TOUCH LAYOUT_IN_SCREEN"),
        ("com.android.settings/com.android.settings.Settings", "com.android.settings", "BASE_APPLICATION",
         Bounds(0, 0, w, h), "")))
    dropdown = [WmWindow(m.title, m.package, m.type, m.frame, m.visible,
                         ("NOT_FOCUSABLE", "ALT_FOCUSABLE_IM") if m.type == "APPLICATION_PANEL" else m.flags)
                for m in menu]
    # 008 dumped as the active window: the menu is known from the window manager only (synthetic),
    # so it is never modal itself; dumped alone (a focusable pop-up is the active window) it is
    assert _modal_windows(_completed("008", (w, h), menu)) == []
    popup_xml = (
        '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
        '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" '
        'content-desc="" clickable="false" bounds="[500,100][1060,700]">'
        '<node index="0" text="" resource-id="" class="android.widget.ListView" package="com.android.settings" '
        'content-desc="" clickable="false" scrollable="false" bounds="[500,100][1060,700]">'
        '<node index="0" text="Search settings" resource-id="android:id/title" class="android.widget.TextView" '
        'package="com.android.settings" content-desc="" clickable="true" bounds="[500,100][1060,400]"/>'
        '<node index="1" text="Help" resource-id="android:id/title" class="android.widget.TextView" '
        'package="com.android.settings" content-desc="" clickable="true" bounds="[500,400][1060,700]"/>'
        "</node></node></hierarchy>")
    tree = parse_hierarchy(with_wm_windows(popup_xml, menu), screen_size=(w, h))
    assert _modal_windows(tree) == [("com.android.settings", "menu")]
    modal = modal_in_front(HitIndex.of(tree))
    assert modal is not None and modal.name == "the menu" and blocking(HitIndex.of(tree), 200, 1200) is modal
    tree = parse_hierarchy(with_wm_windows(popup_xml, dropdown), screen_size=(w, h))
    assert _modal_windows(tree) == [] and blocking(HitIndex.of(tree), 200, 1200) is None


def test_the_keyboard_and_the_bars_are_never_modal() -> None:
    """017: a real login form dumped alone, the keyboard and the bars from the window manager."""
    xml = dump("017").decode("utf-8")
    plain = parse_hierarchy(xml)
    w, h = plain.screen_width, plain.screen_height
    report = parse_window_list(_dumpsys(
        *_bars(w, h),
        ("InputMethod", "com.google.android.inputmethod.latin", "INPUT_METHOD", Bounds(0, h - 900, w, h - 48),
         "NOT_FOCUSABLE LAYOUT_IN_SCREEN"),
        ("com.example/com.example.Login", plain.nodes[0].package, "BASE_APPLICATION", Bounds(0, 0, w, h), "")))
    tree = parse_hierarchy(with_wm_windows(xml, report), screen_size=(w, h))
    index = HitIndex.of(tree)
    assert Layer.IME in {x.layer for x in index.windows}
    assert _modal_windows(tree) == [] and modal_in_front(index) is None
    assert index_screen(tree).behind == 0


def test_another_apps_overlay_is_not_modal() -> None:
    """042: Instagram's story editor under Samsung's Edge panel handle (another app's small window)
    and the bars, as uiautomator2 dumps them."""
    tree = parse_hierarchy(dump("042"))
    packages = {x.package for x in HitIndex.of(tree).windows}
    assert "com.samsung.android.app.cocktailbarservice" in packages
    assert _modal_windows(tree) == []
