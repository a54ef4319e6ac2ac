from __future__ import annotations

from sim_helpers import login, node, nodes, tap, tap_reachable

from artemis_cli.sim import SimPhone


def test_settings_ui_and_settings_command_mirror_each_other(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="Network & internet")
    tap(phone, resource_id="com.android.settings:id/airplane_switch")
    assert phone.shell("settings get global airplane_mode_on").strip() == "1"
    tap(phone, text="Wi-Fi")  # tapping the row toggles too
    assert phone.shell("settings get global wifi_on").strip() == "0"
    phone.shell("settings put global wifi_on 1")
    assert node(phone, resource_id="com.android.settings:id/wifi_switch").get("checked") == "true"
    phone.shell("settings put global mobile_data 0")
    assert node(phone, resource_id="com.android.settings:id/mobile_data_switch").get("checked") == "false"
    phone.key("back")
    tap(phone, text="Connected devices")
    tap(phone, resource_id="com.android.settings:id/bluetooth_switch")
    assert phone.shell("settings get global bluetooth_on") == "1\n"


def test_display_dark_theme_brightness_timeout(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="Display")
    tap(phone, resource_id="com.android.settings:id/dark_theme_switch")
    assert phone.shell("settings get secure ui_night_mode").strip() == "2"
    tap(phone, text="Brightness level")
    for _ in range(12):
        tap(phone, content_desc="Increase brightness")
    assert phone.shell("settings get system screen_brightness").strip() == "255"
    assert node(phone, resource_id="com.android.settings:id/brightness_value").get("text") == "100%"
    tap(phone, content_desc="Decrease brightness")
    assert phone.shell("settings get system screen_brightness").strip() == "230"
    tap(phone, text="Done")
    tap(phone, text="Screen timeout")
    assert node(phone, text="30 seconds").get("checked") == "true"
    tap(phone, text="10 minutes")
    assert phone.shell("settings get system screen_off_timeout").strip() == "600000"
    assert nodes(phone, text="After 10 minutes of inactivity")
    phone.shell("settings put system screen_off_timeout 60000")
    assert nodes(phone, text="After 1 minute of inactivity")


def test_about_phone_and_device_name(phone: SimPhone) -> None:
    phone.launch("com.android.settings")
    tap(phone, text="About phone")
    for title in ("Device name", "Model", "Android version", "Build number"):
        assert nodes(phone, text=title)
    tap(phone, text="Device name")
    tap(phone, resource_id="com.android.settings:id/device_name_input")
    for _ in range(len("Artemis Sim")):
        phone.key("delete")
    phone.type_text("Pixel Lab")
    tap(phone, text="OK")
    assert phone.shell("settings get global device_name").strip() == "Pixel Lab"


def _add_alarm(phone: SimPhone, hour_clicks: int, minute_clicks: int, pm: bool, label: str) -> None:
    tap_reachable(phone, content_desc="Add alarm")  # with 6+ alarms a row's Delete lies under its centre
    for _ in range(hour_clicks):
        tap(phone, content_desc="Increase hour")
    for _ in range(minute_clicks):
        tap(phone, content_desc="Increase minute")
    tap(phone, text="PM" if pm else "AM")
    if label:
        tap(phone, resource_id="com.android.deskclock:id/label_input")
        phone.type_text(label)
    tap(phone, text="OK")


def test_create_ten_alarms_and_query(phone: SimPhone) -> None:
    phone.launch("com.android.deskclock")
    for i in range(10):
        _add_alarm(phone, i, i * 5 % 60, i % 2 == 1, f"A{i}")
    out = phone.shell("content query --uri content://com.android.deskclock/alarms")
    assert out.count("Row: ") == 12
    assert "label=A3, time=11:15 PM" in out  # 8 + 3 = 11, 15 minutes, PM
    assert "hour=23, minutes=15" in out
    assert phone.shell("content query --uri content://com.android.deskclock/alarms --where \"label='A9'\"").startswith(
        "Row: 0 ")
    # typed time instead of +/-
    tap_reachable(phone, content_desc="Add alarm")
    tap(phone, resource_id="com.android.deskclock:id/hour")
    phone.type_text("6")
    tap(phone, resource_id="com.android.deskclock:id/minute")
    phone.type_text("45")
    tap(phone, text="OK")
    assert "time=6:45 AM" in phone.shell("content query --uri content://com.android.deskclock/alarms")


def test_alarm_switch_and_delete(phone: SimPhone) -> None:
    phone.launch("com.android.deskclock")
    tap(phone, content_desc="7:30 AM alarm")
    assert "enabled=0, label=Wake up" in phone.shell("content query --uri content://com.android.deskclock/alarms")
    tap(phone, content_desc="Delete alarm")
    out = phone.shell("content query --uri content://com.android.deskclock/alarms")
    assert "Wake up" not in out and out.count("Row:") == 1


def test_invalid_time_shows_error(phone: SimPhone) -> None:
    phone.launch("com.android.deskclock")
    tap(phone, content_desc="Add alarm")
    tap(phone, resource_id="com.android.deskclock:id/hour")
    phone.type_text("77")
    tap(phone, text="OK")
    assert node(phone, resource_id="com.android.deskclock:id/error").get("text") == "Enter a valid time"


def test_create_contact_then_query_and_delete(phone: SimPhone) -> None:
    phone.launch("com.android.contacts")
    tap(phone, content_desc="Create contact")
    for rid, value in [("first_name", "Zed"), ("last_name", "Young"), ("phone", "+1 555-0199"),
                       ("email", "zed@example.com")]:
        tap(phone, resource_id=f"com.android.contacts:id/{rid}")
        phone.type_text(value)
    tap(phone, text="Save")
    assert nodes(phone, text="Zed Young")  # details screen
    out = phone.shell("content query --uri content://com.android.contacts/contacts --where \"display_name='Zed Young'\"")
    assert out == "Row: 0 _id=16, display_name=Zed Young, first_name=Zed, last_name=Young, phone=+1 555-0199, " \
                  "email=zed@example.com\n"
    tap(phone, text="Delete")
    tap(phone, text="Delete", resource_id="android:id/button1")
    assert phone.shell("content query --uri content://com.android.contacts/contacts --where "
                       "\"display_name='Zed Young'\"") == "No result found.\n"


def test_notes_create_edit_delete(phone: SimPhone) -> None:
    phone.launch("com.artemis.notes")
    tap(phone, content_desc="New note")
    tap(phone, resource_id="com.artemis.notes:id/title")
    phone.type_text("Trip")
    tap(phone, resource_id="com.artemis.notes:id/body")
    phone.type_text("Pack bags")
    tap(phone, text="Save")
    assert "title=Trip, body=Pack bags" in phone.shell("content query --uri content://com.artemis.notes/notes")
    tap(phone, content_desc="Trip")
    tap(phone, content_desc="Delete note")
    tap(phone, resource_id="android:id/button1")
    assert "Trip" not in phone.shell("content query --uri content://com.artemis.notes/notes")


def test_shop_login_failure_then_success(phone: SimPhone) -> None:
    phone.launch("com.artemis.shop")
    assert phone.shell("content query --uri content://com.artemis.shop/session") == "No result found.\n"
    tap(phone, resource_id="com.artemis.shop:id/username")
    phone.type_text("demo")
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text("wrong")
    phone.key("enter")
    assert node(phone, resource_id="com.artemis.shop:id/error").get("text") == "Wrong username or password"
    assert node(phone, resource_id="com.artemis.shop:id/password").get("text") == "Password"  # cleared
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text("artemis123")
    tap(phone, text="Log in")
    assert phone.shell("content query --uri content://com.artemis.shop/session") == \
        "Row: 0 username=demo, logged_in=1\n"
    assert nodes(phone, text="Cart (0)")


def test_shop_cart_checkout_with_scrolling(phone: SimPhone) -> None:
    login(phone)
    tap(phone, content_desc="Add Wireless Mouse to cart")
    tap(phone, content_desc="Add Wireless Mouse to cart")
    while not nodes(phone, content_desc="Add Lunch Box to cart"):
        phone.swipe(540, 2100, 540, 700)
    tap(phone, content_desc="Add Lunch Box to cart")
    out = phone.shell("content query --uri content://com.artemis.shop/cart")
    assert out == ("Row: 0 _id=1, product=Wireless Mouse, price=24.99, quantity=2\n"
                   "Row: 1 _id=45, product=Lunch Box, price=13.99, quantity=1\n")
    tap(phone, resource_id="com.artemis.shop:id/cart_button")
    assert node(phone, resource_id="com.artemis.shop:id/cart_total").get("text") == "Total: $63.97"
    tap(phone, content_desc="Remove Lunch Box")
    tap(phone, text="Checkout")
    number = node(phone, resource_id="com.artemis.shop:id/order_number").get("text")
    assert number == "Order number: ART-10001"
    orders = phone.shell("content query --uri content://com.artemis.shop/orders")
    assert orders == "Row: 0 _id=1, order_number=ART-10001, items=2, total=49.98, products=Wireless Mouse x2\n"
    assert phone.shell("content query --uri content://com.artemis.shop/cart") == "No result found.\n"
