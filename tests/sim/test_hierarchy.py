from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from sim_helpers import bounds, login, node, nodes, tap

from artemis_cli.sim import SimPhone
from artemis_cli.sim import widgets as W

ATTRS = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
         "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds"]
# uiautomator2's dumper (fixtures/real-dumps/041, 042): visible-to-user before bounds, then three more.
U2_ATTRS = [*ATTRS[:-1], "visible-to-user", "bounds", "drawing-order", "hint", "display-id"]
REAL_DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "real-dumps"


def _all_screens(phone: SimPhone) -> list[str]:
    dumps = [phone.hierarchy()]
    for pkg in ("com.android.settings", "com.android.deskclock", "com.android.contacts", "com.artemis.notes",
                "com.artemis.shop"):
        phone.launch(pkg)
        dumps.append(phone.hierarchy())
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text('a<b>&"c')
    dumps.append(phone.hierarchy())
    return dumps


def test_u2_attributes_are_those_of_the_real_uiautomator2_dumps() -> None:
    for name in ("041-superproxy-u2-rot1-navbar-first.xml", "042-instagram-story-u2-navbar-window.xml"):
        real = ET.fromstring((REAL_DUMPS / name).read_bytes())
        assert all([a for a in n.attrib if a != "NAF"] == U2_ATTRS for n in real.iter("node")), name
        assert all(w.get("index") == "0" and w.get("drawing-order") == "0" for w in real), name


def test_dump_is_uiautomator2_format(phone: SimPhone) -> None:
    for xml in _all_screens(phone):
        assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\">\r\n"
                              '  <node index="0" ')
        assert xml.endswith("\r\n</hierarchy>") and "\n" not in xml.replace("\r\n", "")
        root = ET.fromstring(xml)
        assert root.tag == "hierarchy"
        for n in root.iter("node"):
            assert list(n.attrib) == U2_ATTRS
            assert (n.get("visible-to-user"), n.get("display-id")) == ("true", "0")
            l_, t, r, b = bounds(n)
            assert 0 <= l_ <= r <= 1080 and 0 <= t <= b <= 2400
        assert all(w.get("index") == "0" and w.get("drawing-order") == "0" for w in root)


def test_shell_dump_is_one_line_of_the_active_window_with_the_classic_attributes(phone: SimPhone) -> None:
    for _ in _all_screens(phone):
        pass
    assert phone.keyboard_visible()  # the keyboard and both bars are on screen: none is dumped
    xml = phone.shell("uiautomator dump /dev/tty").removesuffix("UI hierchary dumped to: /dev/tty\n")
    assert xml == phone.dump_xml() == phone.dump_xml()  # no shuffle: the same screen, the same bytes
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">")
    root = ET.fromstring(xml)
    # getRootInActiveWindow(): the app's window alone, as a phone's `uiautomator dump` writes it
    assert [(w.get("package"), bounds(w)) for w in root] == [("com.artemis.shop", (0, 96, 1080, 2274))]
    assert all(list(n.attrib) == ATTRS for n in root.iter("node"))


def test_shell_dump_of_a_dialog_is_the_dialog_alone(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    tap(phone, content_desc="Alice Anderson")
    tap(phone, text="Delete")
    phone.shell("uiautomator dump")
    root = ET.fromstring(phone.shell("cat /sdcard/window_dump.xml"))
    assert [(w.get("package"), bounds(w)) for w in root] == [("com.android.contacts", (60, 745, 1020, 1165))]
    assert {n.get("text") for n in root.iter("node")} >= {"Delete", "Cancel"}
    assert not [n for n in root.iter("node") if n.get("content-desc") == "Alice Anderson"]


def _windows(phone: SimPhone) -> list[tuple[str, str, tuple[int, int, int, int]]]:
    return [(w.get("package", ""), w.get("resource-id", ""), bounds(w)) for w in ET.fromstring(phone.hierarchy())]


def test_every_window_is_a_top_level_node_with_the_bounds_it_is_drawn_at(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    tap(phone, content_desc="Alice Anderson")
    tap(phone, text="Delete")
    wins = _windows(phone)
    assert sorted(wins) == sorted([
        ("com.android.systemui", "", (0, 0, 1080, 96)),  # status bar
        ("com.android.contacts", "", (0, 96, 1080, 2274)),  # the app, above the navigation bar
        ("com.android.contacts", "", (60, 745, 1020, 1165)),  # the dialog
        ("com.android.systemui", "com.android.systemui:id/navigation_bar_frame", (0, 2274, 1080, 2400)),
    ])
    assert [(w.package, w.root.bounds) for w in phone.windows()] == [  # drawing order, bottom to top
        ("com.android.contacts", (0, 96, 1080, 2274)), ("com.android.contacts", (60, 745, 1020, 1165)),
        ("com.android.systemui", (0, 0, 1080, 96)), ("com.android.systemui", (0, 2274, 1080, 2400))]
    assert node(phone, resource_id="com.android.systemui:id/clock").get("text") == "9:00"
    back = node(phone, resource_id="com.android.systemui:id/back")
    assert (back.get("content-desc"), back.get("class"), back.get("clickable")) == ("Back", W.IMAGE_VIEW, "true")
    assert [n.get("content-desc") for n in nodes(phone, package="com.android.systemui", clickable="true")] == [
        "Back", "Overview", "Home"]
    tap(phone, text="Cancel")
    tap(phone, text="Edit")
    tap(phone, resource_id="com.android.contacts:id/first_name")
    wins = _windows(phone)
    assert ("com.google.android.inputmethod.latin", "", (0, 1514, 1080, 2274)) in wins and len(wins) == 4


def test_window_order_varies_per_dump_and_is_reproducible() -> None:
    def orders(seed: int) -> list[tuple[str, ...]]:
        p = SimPhone(seed=seed, popups=False)
        p.launch("com.android.contacts")
        tap(p, resource_id="com.android.contacts:id/search_field")  # keyboard up: 4 windows
        return [tuple(f"{w.get('package')}|{w.get('resource-id')}" for w in ET.fromstring(p.hierarchy()))
                for _ in range(12)]

    a = orders(5)
    assert all(len(o) == 4 and len(set(o)) == 4 for o in a)
    assert len(set(a)) >= 4  # not one fixed order
    assert a == orders(5)  # same seed, same sequence of dumps: same orders
    assert a != orders(6)


def test_only_visible_rows_are_dumped_and_clipped(phone: SimPhone) -> None:
    login(phone)
    names = [n.get("text") for n in nodes(phone, resource_id="com.artemis.shop:id/product_name")]
    assert "Wireless Mouse" in names and "Lunch Box" not in names
    assert 5 < len(names) < 15
    lst = node(phone, resource_id="com.artemis.shop:id/product_list")
    assert lst.get("scrollable") == "true" and lst.get("class") == "androidx.recyclerview.widget.RecyclerView"
    _lt, ltop, _lr, lb = bounds(lst)
    for row in lst:
        _rl, rt, _rr, rb = bounds(row)
        assert ltop <= rt and rb <= lb
    last = bounds(list(lst)[-1])
    assert last[3] == lb  # the bottom row is partially visible: clipped to the list


def test_password_is_dotted_in_dump(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    pw = node(phone, resource_id="com.artemis.shop:id/password")
    assert pw.get("password") == "true" and pw.get("text") == "Password"  # hint when empty
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text("secret")
    pw = node(phone, resource_id="com.artemis.shop:id/password")
    assert pw.get("text") == "••••••" and pw.get("focused") == "true"
    assert "secret" not in phone.hierarchy()


def test_switch_state_in_dump(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="Network & internet")
    sw = node(phone, resource_id="com.android.settings:id/wifi_switch")
    assert sw.get("class") == "android.widget.Switch" and sw.get("checkable") == "true"
    assert sw.get("checked") == "true"


def test_shuffle_off_lists_the_windows_in_drawing_order() -> None:
    p = SimPhone(popups=False, shuffle_windows=False)
    p.launch("com.android.contacts")
    tap(p, resource_id="com.android.contacts:id/search_field")
    want = [w.package for w in p.windows()]
    assert want == ["com.android.contacts", "com.google.android.inputmethod.latin", "com.android.systemui",
                    "com.android.systemui"]
    for _ in range(5):
        assert [w.get("package") for w in ET.fromstring(p.hierarchy())] == want


def test_root_in_active_dumps_the_front_window_and_fields_name_their_hint(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    tap(phone, content_desc="Alice Anderson")
    tap(phone, text="Delete")
    (dialog,) = ET.fromstring(phone.u2_dump(active_only=True))  # uiautomator2's root_in_active
    assert any(n.get("text") == "Delete this contact?" for n in dialog.iter("node"))
    phone.key("back")
    phone.key("back")
    tap(phone, content_desc="Create contact")
    first = node(phone, resource_id="com.android.contacts:id/first_name")
    assert (first.get("text"), first.get("hint")) == ("First name", "First name")  # empty: shows its hint
    tap(phone, resource_id="com.android.contacts:id/first_name")
    phone.type_text("Ada")
    first = node(phone, resource_id="com.android.contacts:id/first_name")
    assert (first.get("text"), first.get("hint")) == ("Ada", "First name")
    assert node(phone, resource_id="com.android.systemui:id/clock").get("hint") == ""
