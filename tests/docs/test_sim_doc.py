"""docs/sim.md against the simulated phone itself: every world and app of the code is in the
page and every one the page names exists; the seeded records it lists are exactly what a fresh
phone's ``content query`` returns (so a task author can trust them to avoid collisions); every
content URI it lists answers; every element id it names is one the sim draws; the settings
defaults are what ``settings get`` prints; every fault kind and sim option is described.

The page's tables sit after ``<!-- sim: NAME -->`` markers; the test reads them by that name."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from artemis_cli.config.task import SimOptions
from artemis_cli.sim.faults import FaultSpec
from artemis_cli.sim.phone import SimPhone
from artemis_cli.sim.phone_state import PROVIDERS
from artemis_cli.sim.popup import PROMO_PACKAGE
from artemis_cli.sim.worlds import WORLDS

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "sim.md"
_MARKER = re.compile(r"<!-- sim: (\w+) -->")
_ROW = re.compile(r"^Row: \d+ (.*)$", re.M)


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def section(doc: str, name: str) -> str:
    marks = list(_MARKER.finditer(doc))
    for i, m in enumerate(marks):
        if m.group(1) == name:
            end = marks[i + 1].start() if i + 1 < len(marks) else len(doc)
            return doc[m.end():end]
    raise AssertionError(f"docs/sim.md has no '<!-- sim: {name} -->' section")


def table(doc: str, name: str) -> list[list[str]]:
    """The first table of the section: its body rows, as cells (header and rule skipped)."""
    rows = [line for line in section(doc, name).splitlines() if line.startswith("|")]
    return [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows[2:]]


def code(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def query(phone: SimPhone, uri: str) -> list[dict[str, str]]:
    out = phone.shell(f"content query --uri {uri}")
    return [dict(kv.split("=", 1) for kv in re.split(r", (?=\w+=)", row)) for row in _ROW.findall(out)]


def test_every_world_and_only_real_worlds(doc: str) -> None:
    documented = {code(r[0])[0] for r in table(doc, "worlds")}
    assert documented == set(WORLDS)


def test_every_app_package_and_only_real_ones(doc: str) -> None:
    packages = {cls.package for world in WORLDS.values() for cls in world.apps} | {PROMO_PACKAGE}
    documented = {code(r[1])[0] for r in table(doc, "apps")}
    assert documented == packages


def test_seeded_notes_contacts_alarms_and_products_are_what_the_phone_holds(doc: str) -> None:
    phone = SimPhone()
    notes = [(r["title"], r["body"]) for r in query(phone, "content://com.artemis.notes/notes")]
    assert [(r[0], r[1]) for r in table(doc, "notes")] == notes
    contacts = [(r["display_name"], r["phone"], r["email"]) for r in query(phone, "content://com.android.contacts/contacts")]
    assert [(r[0], r[1], r[2]) for r in table(doc, "contacts")] == contacts
    alarms = [(r["label"], r["time"], "on" if r["enabled"] == "1" else "off")
              for r in query(phone, "content://com.android.deskclock/alarms")]
    assert [tuple(r) for r in table(doc, "alarms")] == alarms
    products = [(r["name"], r["_id"], f"${r['price']}") for r in query(phone, "content://com.artemis.shop/products")]
    assert [tuple(r) for r in table(doc, "products")] == products
    assert query(phone, "content://com.artemis.shop/orders") == [] and query(phone, "content://com.artemis.shop/cart") == []
    # the probe world's extra note is named on the page
    probe = query(SimPhone(world="probe"), "content://com.artemis.notes/notes")
    assert len(probe) == len(notes) + 1 and f'"{probe[-1]["title"]}"' in section(doc, "notes")


def test_every_content_uri_answers_and_every_provider_is_listed(doc: str) -> None:
    phone = SimPhone()
    uris = [u for r in table(doc, "uris") for u in code(r[0]) if u.startswith("content://")]
    assert uris
    for uri in uris:
        out = phone.shell(f"content query --uri {uri}")
        assert "Error while accessing provider" not in out, (uri, out)
    authorities = {re.match(r"content://([^/]+)/", u).group(1) for u in uris}  # type: ignore[union-attr]
    assert set(PROVIDERS) | {"settings"} <= authorities


#: A tour of every screen the page's id table names: (world, faults, steps); a step taps the
#: element whose short id, text or content-desc is the name, ``"type:TEXT"`` types, ``"back"``
#: presses back, ``"double:NAME"`` double-taps.
TOURS: list[tuple[str, str | None, list[str]]] = [
    ("default", None, ["launch:com.android.settings", "network_row", "back", "connected_row", "back",
                       "display_row", "brightness_row", "button1", "screen_timeout_row", "button2", "back",
                       "about_row", "Device name"]),
    ("default", None, ["launch:com.android.deskclock", "fab", "hour", "type:99", "button1", "button2"]),
    ("default", None, ["launch:com.android.contacts", "Alice Anderson", "menu_delete", "button2", "menu_edit",
                       "back", "back", "floating_action_button", "editor_menu_save_button"]),
    ("default", None, ["launch:com.artemis.notes", "new_note", "save", "back", "Groceries", "delete"]),
    ("default", None, ["launch:com.artemis.shop", "login", "username", "type:demo", "password", "type:artemis123",
                       "login", "double:product_name", "add_to_cart", "cart_button", "checkout"]),
    ("probe", None, ["launch:com.artemis.notes"]),
    ("drift", None, ["launch:com.artemis.shop", "button1", "username", "type:demo", "password", "type:artemis123",
                     "login", "add_to_cart", "More options", "Cart (1)", "proceed_to_checkout"]),
    ("default", "popup_storm", ["launch:com.artemis.shop", "username", "password", "username"]),
]


def _node_ids(xml: str) -> set[str]:
    return set(re.findall(r'resource-id="([^"]+)"', xml))


def _find(xml: str, name: str) -> tuple[int, int]:
    for node in re.finditer(r"<node [^>]*>", xml):
        tag = node.group(0)
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
        rid = attrs.get("resource-id", "")
        if name in (rid, rid.rsplit("/", 1)[-1], attrs.get("text"), attrs.get("content-desc")):
            x1, y1, x2, y2 = map(int, re.findall(r"\d+", attrs["bounds"]))
            return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"no element {name!r} on the screen")


def _drawn_ids() -> set[str]:
    """Every resource id the sim draws on the toured screens, full and short."""
    seen: set[str] = set()
    for world, faults, steps in TOURS:
        phone = SimPhone(world=world, popups=faults is not None, faults=faults)
        for step in steps:
            if step.startswith("launch:"):
                phone.launch(step.split(":", 1)[1])
            elif step.startswith("type:"):
                phone.type_text(step.split(":", 1)[1])
            elif step == "back":
                phone.key("back")
            elif step.startswith("double:"):
                phone.double_tap(*_find(phone.hierarchy(), step.split(":", 1)[1]))
            else:
                phone.tap(*_find(phone.hierarchy(), step))
            seen |= _node_ids(phone.hierarchy())
    return seen | {rid.rsplit("/", 1)[-1] for rid in seen if rid.startswith("com.")}


def test_every_element_id_named_is_drawn_by_the_sim(doc: str) -> None:
    ids = [i for r in table(doc, "ids") for i in code(r[2])]
    assert len(ids) > 80
    drawn = _drawn_ids()
    missing = [i for i in ids if i not in drawn and f"android:id/{i}" not in drawn]
    assert missing == []


def test_settings_defaults_are_what_settings_get_prints(doc: str) -> None:
    phone = SimPhone()
    rows = table(doc, "settings")
    assert len(rows) == 10
    for _, key, values in rows:
        namespace, name = code(key)[0].split()
        default = re.search(r"\(([^)]*)\)$", values).group(1)  # type: ignore[union-attr]
        assert phone.shell(f"settings get {namespace} {name}").strip() == default, key


def test_every_fault_kind_and_sim_option_is_described(doc: str) -> None:
    options = section(doc, "options")
    for spec in fields(FaultSpec):
        assert f"`{spec.name}" in options, spec.name
    documented = {code(r[0])[0] for r in table(doc, "options")}
    assert documented == {info.alias or name for name, info in SimOptions.model_fields.items()}


def test_fidelity_section_lists_exactly_the_shells_commands(doc: str) -> None:
    listed = section(doc, "fidelity").split("**Implemented.**", 1)[1].split("\n- ", 1)[0]
    assert set(code(listed)) == set(SimPhone(popups=False).sh.commands)
