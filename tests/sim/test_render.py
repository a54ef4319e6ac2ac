from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from PIL import Image
from sim_helpers import bounds, login, node, nodes, tap

from artemis_cli.sim import SimPhone


def _img(phone: SimPhone) -> Image.Image:
    return Image.open(io.BytesIO(phone.screenshot())).convert("RGB")


def _crop(phone: SimPhone, box: tuple[int, int, int, int]) -> bytes:
    return _img(phone).crop(box).tobytes()


def test_png_matches_screen_size() -> None:
    phone = SimPhone(width=720, height=1600, popups=False)
    im = Image.open(io.BytesIO(phone.screenshot()))
    assert im.format == "PNG" and im.size == (720, 1600)
    assert phone.info().width == 720 and phone.info().serial == "sim"
    assert SimPhone(world="variant").info().serial == "sim:variant"


def test_switch_on_and_off_pixels_differ_inside_bounds(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="Network & internet")
    sw = node(phone, resource_id="com.android.settings:id/wifi_switch")
    box = bounds(sw)
    on = _crop(phone, box)
    phone.tap(*(((box[0] + box[2]) // 2), (box[1] + box[3]) // 2))
    off = _crop(phone, box)
    assert on != off
    # and outside the switch, in the title, nothing changed
    title = bounds(node(phone, text="Mobile data"))
    assert len(_img(phone).crop(title).getcolors(1 << 16) or []) > 1


def test_buttons_and_fields_are_drawn_inside_their_bounds(phone: SimPhone) -> None:
    login(phone)
    im = _img(phone)
    for n in [*nodes(phone, text="Add to cart")[:3], node(phone, resource_id="com.artemis.shop:id/cart_button")]:
        l_, t, r, b = bounds(n)
        colours = im.crop((l_ + 2, t + 2, r - 2, b - 2)).getcolors(1 << 16) or []
        assert len(colours) >= 2  # not plain background
        outside = im.getpixel((min(1079, r + 1), (t + b) // 2))
        assert im.getpixel(((l_ + r) // 2, t + 4)) != outside or len(colours) > 2


def test_password_field_draws_dots_not_text(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    tap(phone, resource_id="com.artemis.shop:id/password")
    empty = _crop(phone, bounds(node(phone, resource_id="com.artemis.shop:id/password")))
    phone.type_text("abc")
    three = _crop(phone, bounds(node(phone, resource_id="com.artemis.shop:id/password")))
    assert empty != three


def test_same_seed_same_actions_identical_bytes() -> None:
    def run() -> list[bytes]:
        p = SimPhone(seed=7)
        shots = []
        login(p)
        p.swipe(540, 2000, 540, 1000)
        shots.append(p.screenshot())
        p.key("home")
        shots.append(p.screenshot())
        return shots

    assert run() == run()


def test_keyboard_is_drawn_and_dumped_as_its_own_window(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    before = _crop(phone, (0, 1900, 1080, 2274))
    nav_before = _crop(phone, (0, 2274, 1080, 2400))
    xml_before = phone.hierarchy()
    assert "com.google.android.inputmethod.latin" not in xml_before
    tap(phone, resource_id="com.android.contacts:id/search_field")
    assert _crop(phone, (0, 1900, 1080, 2274)) != before
    assert _crop(phone, (0, 2274, 1080, 2400)) == nav_before  # the navigation bar stays below it
    ime = [w for w in ET.fromstring(phone.hierarchy()) if w.get("package") == "com.google.android.inputmethod.latin"]
    assert len(ime) == 1 and bounds(ime[0]) == (0, 1514, 1080, 2274)
    keys = {n.get("content-desc"): n for n in ime[0].iter("node") if n.get("clickable") == "true"}
    assert {"q", "a", "Shift", "Delete", "Symbols", "Space", "Enter"} <= set(keys)
    for n in keys.values():  # each key's bounds hold its picture: not the background
        l_, t, r, b = bounds(n)
        assert len(_img(phone).crop((l_ + 8, t + 10, r - 8, b - 10)).getcolors(1 << 16) or []) >= 2


def test_dark_theme_changes_picture(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    light = phone.screenshot()
    phone.shell("settings put secure ui_night_mode 2")
    dark = phone.screenshot()
    assert light != dark
    assert sum(_img(phone).getpixel((540, 1500))) < 200


def test_screenshot_cache_returns_same_bytes(phone: SimPhone) -> None:
    a = phone.screenshot()  # drawn now: it carries its picture (perception.screenshot)
    b = phone.screenshot()  # the kept PNG of the same screen, as plain bytes
    assert b == a and type(b) is bytes
    assert phone.screenshot() is b  # not encoded again


def test_a_field_holding_a_megabyte_of_text_shows_its_start() -> None:
    """A phone takes long text in a field and shows its start; Pillow refuses strings over a
    million characters, so only the visible prefix is drawn (issue 35: one type_text of 1 MB
    wedged an MCP session, every later screenshot raising)."""
    long, short = SimPhone(popups=False), SimPhone(popups=False)
    for phone, text in ((long, "Pixel " * 200_000), (short, "Pixel " * 40)):
        phone.launch("com.android.settings")
        tap(phone, text="About phone")
        tap(phone, text="Device name")
        tap(phone, resource_id="com.android.settings:id/device_name_input")
        for _ in range(len("Artemis Sim")):
            phone.key("delete")
        phone.type_text(text)
    field = node(long, resource_id="com.android.settings:id/device_name_input")
    assert len(field.get("text") or "") == 1_200_000  # the field keeps every character
    box = bounds(field)
    assert _crop(long, box) == _crop(short, box)  # both show the same start, cut with "..."
    assert len(_img(long).crop(box).getcolors(1 << 16) or []) > 2  # text is drawn, not an empty box
