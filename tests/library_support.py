"""What the Python API's tests share: fake-server policies that play one script per AI step."""

from __future__ import annotations

from typing import Any

#: Two AI steps on the default world's Shop after ``phone.launch("Shop")``: 3 + 5 steps.
LOGIN_GOAL = "log in to the Shop with the demo account (username demo)"
BUY_GOAL = "add a Desk Lamp to the cart and check out"
LOGIN = [{"type": {"text": "demo", "into": {"id": "username"}}},
         {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}},
         {"finish": {"success": True, "answer": "logged in"}}]
BUY = [{"swipe": {"from": [540, 2100], "to": [540, 700]}}, {"tap": {"desc": "Add Desk Lamp to cart"}},
       {"tap": {"id": "cart_button"}}, {"tap": {"text": "Checkout"}},
       {"finish": {"success": True, "answer": "ordered one Desk Lamp"}}]
SCRIPTS = {LOGIN_GOAL: LOGIN, BUY_GOAL: BUY}
SHOP_SECRETS = {"shop_password": "artemis123"}


def run_shop(phone: Any) -> None:
    """The 10-step test: launch the Shop, log in (AI), buy a lamp (AI), see the thanks."""
    phone.launch("Shop")
    phone.act(LOGIN_GOAL)
    phone.act(BUY_GOAL)
    phone.wait_for("Thank you for your order!", timeout=0)
