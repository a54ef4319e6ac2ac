"""The ``drift`` world: the Shop after an update. Each of its four changes is seen through the
phone's own dump, the office order can still be placed on it by the actions a model would take
(with the task's success checks true), and ``sim:drift`` / ``sim: {world: drift}`` pick it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from sim_helpers import center, node, nodes, tap

from artemis_cli.config.task import load_task
from artemis_cli.device.select import resolve_device
from artemis_cli.operators.checks import evaluate_checks
from artemis_cli.operators.observe import observe
from artemis_cli.sim import SimPhone

REPO = Path(__file__).resolve().parents[2]
SHOP = "com.artemis.shop"
OFFICE = load_task(REPO / "tasks" / "shop-office-order.yaml")


def rid(name: str) -> str:
    return f"{SHOP}:id/{name}"


def texts(phone: SimPhone) -> list[str]:
    return [n.get("text", "") for n in nodes(phone) if n.get("text")]


def dismiss_promo(phone: SimPhone) -> None:
    if nodes(phone, resource_id="com.artemis.promo:id/promo_dismiss"):
        tap(phone, resource_id="com.artemis.promo:id/promo_dismiss")


def drift_login(phone: SimPhone) -> None:
    phone.launch(SHOP)
    tap(phone, text="Got it")
    tap(phone, resource_id=rid("username"))
    phone.type_text("demo")
    tap(phone, resource_id=rid("password"))
    phone.type_text("artemis123\n")


def test_first_launch_shows_whats_new_over_login_and_covered_fields_take_no_taps() -> None:
    phone = SimPhone(world="drift", popups=False)
    phone.launch(SHOP)
    assert "What's new" in texts(phone) and "What's new" not in texts(_default_shop())
    assert node(phone, resource_id="android:id/button1").get("text") == "Got it"
    field = node(phone, resource_id=rid("username"))  # in the dump, under the dialog's window
    phone.tap(*center(field))
    assert phone.snapshot_state()["focus"] is None  # the modal dialog swallowed the tap
    tap(phone, text="Got it")
    phone.tap(*center(node(phone, resource_id=rid("username"))))
    assert phone.snapshot_state()["focus"] == "username"
    phone.shell(f"am force-stop {SHOP}")  # setup's force-stop: the dialog was a first run only
    phone.launch(SHOP)
    assert "What's new" not in texts(phone)
    fresh = SimPhone(world="drift", popups=False)
    fresh.launch(SHOP)
    fresh.key("back")  # back dismisses it too, as a real dialog
    assert "What's new" not in texts(fresh) and fresh.current_app() == SHOP


def _default_shop() -> SimPhone:
    phone = SimPhone(popups=False)
    phone.launch(SHOP)
    return phone


def test_cart_button_moved_into_the_more_options_overflow_menu() -> None:
    phone = SimPhone(world="drift", popups=False)
    drift_login(phone)
    tap(phone, content_desc="Add USB-C Cable to cart")
    assert not nodes(phone, resource_id=rid("cart_button")) and not nodes(phone, text="Cart (1)")
    more = node(phone, content_desc="More options")
    assert more.get("resource-id") == "" and more.get("class") == "android.widget.ImageButton"
    assert nodes(phone, resource_id=rid("logout"))
    phone.tap(*center(more))
    item = node(phone, text="Cart (1)")
    assert item.get("resource-id") == "android:id/title"
    phone.tap(540, 1500)  # outside the menu: closes it, and the row under it is not touched
    assert not nodes(phone, text="Cart (1)") and phone.snapshot_state()["apps"][SHOP]["ui"]["cart"] == {
        "USB-C Cable": 1}
    phone.tap(*center(node(phone, content_desc="More options")))
    phone.key("back")
    assert not nodes(phone, text="Cart (1)") and "Shop" in texts(phone)
    phone.tap(*center(node(phone, content_desc="More options")))
    tap(phone, text="Cart (1)")
    assert "Cart" in texts(phone) and nodes(phone, resource_id=rid("cart_list"))


def test_checkout_renamed_and_a_confirmation_screen_before_the_order() -> None:
    phone = SimPhone(world="drift", popups=False)
    drift_login(phone)
    tap(phone, content_desc="Add Phone Case to cart")
    tap(phone, content_desc="More options")
    tap(phone, text="Cart (1)")
    assert not nodes(phone, resource_id=rid("checkout")) and not nodes(phone, text="Checkout")
    assert node(phone, resource_id=rid("proceed_to_checkout")).get("text") == "Proceed to checkout"
    tap(phone, resource_id=rid("proceed_to_checkout"))
    assert "Confirm your order" in texts(phone)
    assert node(phone, resource_id=rid("review_total")).get("text") == "Total: $14.99"
    assert phone.shell("content query --uri content://com.artemis.shop/orders").strip() == "No result found."
    tap(phone, text="Back to cart")
    assert nodes(phone, resource_id=rid("cart_list"))
    tap(phone, resource_id=rid("proceed_to_checkout"))
    tap(phone, text="Place order")
    assert "Thank you for your order!" in texts(phone)
    assert "items=1, total=14.99" in phone.shell("content query --uri content://com.artemis.shop/orders")


# The office order by the goal's counts, as a model would: find the product's button (scrolling
# the catalogue down), tap it, dismiss the promotion pop-up whenever it shows.
ORDER = [("USB-C Cable", 4), ("Power Bank", 2), ("Laptop Stand", 2), ("Desk Lamp", 3), ("Coffee Mug", 6),
         ("Water Bottle", 6), ("Notebook", 8), ("Gel Pens", 6), ("Sticky Notes", 5), ("USB Flash Drive", 2),
         ("Mouse Pad", 2), ("Lunch Box", 2)]


def _add_button(phone: SimPhone, name: str) -> ET.Element:
    for _ in range(12):
        dismiss_promo(phone)
        found = [n for n in nodes(phone, content_desc=f"Add {name} to cart") if n.get("visible-to-user") != "false"]
        if found and 400 < center(found[0])[1] < phone.app_height - 60:
            return found[0]
        phone.swipe(540, 1900, 540, 1020)
    raise AssertionError(f"{name} not found")


def test_the_office_order_can_be_placed_on_drift_and_the_task_checks_hold() -> None:
    assert OFFICE.sim is not None
    phone = SimPhone(world="drift", seed=OFFICE.sim.seed, popups=True)
    phone.shell(f"am force-stop {SHOP}")
    phone.launch(SHOP)
    dismiss_promo(phone)
    tap(phone, text="Got it")
    tap(phone, resource_id=rid("username"))
    phone.type_text("demo")
    tap(phone, resource_id=rid("password"))
    phone.type_text("artemis123\n")
    for name, qty in ORDER:
        for _ in range(qty):
            phone.tap(*center(_add_button(phone, name)))
    for step in (lambda: tap(phone, content_desc="More options"), lambda: tap(phone, text="Cart (48)"),
                 lambda: tap(phone, text="Proceed to checkout"), lambda: tap(phone, text="Place order")):
        dismiss_promo(phone)
        step()
    dismiss_promo(phone)
    assert phone.popups.shown > 0  # the pop-ups of the default world are there too
    final = observe(phone, (phone.width, phone.height), "pixels")
    results = evaluate_checks(OFFICE.success, phone, final)
    assert [r.passed for r in results] == [True] * len(OFFICE.success), [r.detail for r in results]


def test_device_spec_and_task_world_pick_drift(tmp_path: Path) -> None:
    assert resolve_device("sim:drift").info().serial == "sim:drift"
    task_file = tmp_path / "t.yaml"
    task_file.write_text("id: t\ngoal: g\ndevice: sim\nsim: {world: drift}\n", encoding="utf-8")
    task = load_task(task_file)
    assert task.sim is not None and task.sim.world == "drift"
    phone = SimPhone(world=task.sim.world)
    phone.launch(SHOP)
    assert "What's new" in texts(phone)
