from __future__ import annotations

import xml.etree.ElementTree as ET

from sim_helpers import bounds, login, node, nodes, tap

from artemis_cli.sim import SimPhone

ATTRS = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
         "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds"]


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


def test_dump_is_uiautomator_format(phone: SimPhone) -> None:
    for xml in _all_screens(phone):
        assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">")
        assert xml.endswith("</hierarchy>")
        root = ET.fromstring(xml)
        assert root.tag == "hierarchy"
        for n in root.iter("node"):
            assert list(n.attrib) == ATTRS
            l_, t, r, b = bounds(n)
            assert 0 <= l_ <= r <= 1080 and 0 <= t <= b <= 2400
        assert all(w.get("index") == "0" for w in root)


def test_windows_order_statusbar_app_dialog(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    tap(phone, content_desc="Alice Anderson")
    tap(phone, text="Delete")
    root = ET.fromstring(phone.hierarchy())
    wins = list(root)
    assert wins[0].get("package") == "com.android.systemui"
    assert bounds(wins[0])[3] <= 100
    assert len(wins) == 3
    assert any(n.get("text") == "Delete this contact?" for n in wins[-1].iter("node"))
    assert node(phone, resource_id="com.android.systemui:id/clock").get("text") == "9:00"


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
